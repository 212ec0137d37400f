//! Recall (D12) over HTTP: which ids are recalled, the per-task contact state it writes, the
//! failed / no-answer default, and COMPLETED -> RUNNING (D10).

use crate::support::{id, TaskFixture, TestApi};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::task::TaskContact;
use outbound_model::{Id, TaskStatus};
use serde_json::{json, Value};

async fn recall(api: &TestApi, task: &str, body: Value) -> crate::support::Answer {
    api.post("acme", &format!("/api/task/{task}/recall"), body)
        .await
}

/// The recalled ids of a success, sorted.
fn recalled(data: &Value) -> Vec<String> {
    let ids: Vec<String> = data["recallIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(data["recallCount"], ids.len(), "{data}");
    let mut sorted = ids;
    sorted.sort();
    sorted
}

fn sorted(ids: &[&String]) -> Vec<String> {
    let mut ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    ids.sort();
    ids
}

/// A queued recall: the allowance, priority and due time D12 asks for.
fn assert_queued(state: &TaskContact, attempts: u32, allowance: u32, priority: u8, outcome: u8) {
    assert_eq!(state.attempts, attempts, "{state:?}");
    assert_eq!(state.allowance, allowance, "{state:?}");
    assert_eq!(state.priority, priority, "{state:?}");
    assert_eq!(state.last_outcome, outcome, "{state:?}");
    assert!(state.next_attempt_at.is_some(), "{state:?}");
}

/// D12: explicit ids are recalled once each, in the order given; ids that are not contacts of the
/// task's data source (another data source's, malformed, unknown, deleted) are ignored.
#[tokio::test]
async fn explicit_ids_recall_only_contacts_of_the_data_source() {
    let api = TestApi::start().await;
    let (source, contacts) = api.source_with_contacts("acme", 4).await;
    let task = api
        .task("acme", "Redial", &source, json!({"maxDialCount": 4}))
        .await;
    api.drive("acme", &task, TaskStatus::Running).await;
    let (_, elsewhere) = api.source_with_contacts("acme", 1).await;
    let (deleted, kept_dialled) = (&contacts[3], &contacts[2]);
    api.post(
        "acme",
        &format!("/api/dataSource/{source}/contact/delete"),
        json!({"contactId": deleted}),
    )
    .await
    .ok();
    // The dialing engine already tried this one twice.
    api.seed_task_contact("acme", &task, kept_dialled, 3, 2)
        .await;
    let unknown = Id::new().to_string();
    let asked = json!([
        contacts[1],
        contacts[0],
        contacts[1],
        elsewhere[0],
        "nope",
        contacts[0].to_lowercase(),
        unknown,
        deleted,
        kept_dialled,
    ]);
    let answer = recall(&api, &task, json!({"contactIds": asked, "priority": 2})).await;
    assert_eq!(
        answer.ok(),
        &json!({"recallCount": 3, "recallIds": [contacts[1], contacts[0], kept_dialled]})
    );
    let written = api.stored_task_contacts("acme", &task).await;
    assert_eq!(
        written.keys().collect::<Vec<_>>(),
        sorted(&[&contacts[0], &contacts[1], kept_dialled])
            .iter()
            .collect::<Vec<_>>()
    );
    // Fresh allowance: attempts so far + maxDialCount.
    assert_queued(&written[&contacts[0]], 0, 4, 2, 0);
    assert_queued(&written[&contacts[1]], 0, 4, 2, 0);
    assert_queued(&written[kept_dialled], 2, 6, 2, 3);
    // Default priority 5; a second recall tops the allowance up again from the attempts made.
    let again = recall(&api, &task, json!({"contactIds": [kept_dialled]})).await;
    assert_eq!(
        again.ok(),
        &json!({"recallCount": 1, "recallIds": [kept_dialled]})
    );
    let written = api.stored_task_contacts("acme", &task).await;
    assert_queued(&written[kept_dialled], 2, 6, 5, 3);
    assert_eq!(written[&contacts[0]].priority, 2);
    // Nothing that matches: 200 with nothing recalled.
    let nothing = recall(&api, &task, json!({"contactIds": [elsewhere[0], "nope"]})).await;
    assert_eq!(nothing.ok(), &json!({"recallCount": 0, "recallIds": []}));
    assert_eq!(
        api.stored_task("acme", &task).await.status,
        TaskStatus::Running
    );
}

/// D12: with no ids, exactly the contacts whose latest outcome in this task is failed (2) or no
/// answer (3) are recalled; successes, undialled contacts, other tasks' outcomes and contacts
/// no longer in the data source are not.
#[tokio::test]
async fn empty_ids_recall_failed_and_unanswered_contacts() {
    let api = TestApi::start().await;
    let task = api.task_in("acme", TaskStatus::Paused, 6).await;
    let other = api.task("acme", "Other", &task.source, json!({})).await;
    let c = &task.contacts;
    for (contact, outcome, attempts) in [(&c[0], 2, 1), (&c[1], 3, 3), (&c[2], 1, 1), (&c[3], 0, 0)]
    {
        api.seed_task_contact("acme", &task.id, contact, outcome, attempts)
            .await;
    }
    // Failed in another task only: not this task's business.
    api.seed_task_contact("acme", &other, &c[4], 2, 1).await;
    // Failed here, then deleted from the data source.
    api.seed_task_contact("acme", &task.id, &c[5], 2, 1).await;
    api.post(
        "acme",
        &format!("/api/dataSource/{}/contact/delete", task.source),
        json!({"contactId": c[5]}),
    )
    .await
    .ok();
    for body in [
        json!({}),
        json!({"contactIds": []}),
        json!({"contactIds": null}),
    ] {
        let answer = recall(&api, &task.id, body.clone()).await;
        assert_eq!(recalled(answer.ok()), sorted(&[&c[0], &c[1]]), "{body}");
    }
    let written = api.stored_task_contacts("acme", &task.id).await;
    assert_queued(&written[&c[0]], 1, 4, 5, 2);
    assert_queued(&written[&c[1]], 3, 6, 5, 3);
    // Untouched: the success, the undialled one, the deleted one.
    assert_eq!(written[&c[2]].allowance, 1);
    assert_eq!(written[&c[3]].allowance, 0);
    assert_eq!(written[&c[5]].allowance, 1);
    assert_eq!(written[&c[5]].next_attempt_at, None);
    assert!(!written.contains_key(&c[4]));
    assert_eq!(
        api.stored_task("acme", &task.id).await.status,
        TaskStatus::Paused
    );
}

/// D10, D12: a COMPLETED task becomes RUNNING (and holds its data source again) when a recall
/// queued something, and stays COMPLETED when nothing matched.
#[tokio::test]
async fn completed_task_runs_again_only_when_something_is_recalled() {
    let api = TestApi::start().await;
    let task = api.task_in("acme", TaskStatus::Completed, 3).await;
    let before = api.stored_task("acme", &task.id).await;
    assert!(before.ended_at.is_some());
    api.seed_task_contact("acme", &task.id, &task.contacts[0], 1, 1)
        .await;
    // Only a success: nothing to recall.
    let answer = recall(&api, &task.id, json!({})).await;
    assert_eq!(answer.ok(), &json!({"recallCount": 0, "recallIds": []}));
    let (_, elsewhere) = api.source_with_contacts("acme", 1).await;
    let answer = recall(&api, &task.id, json!({"contactIds": elsewhere})).await;
    assert_eq!(answer.ok(), &json!({"recallCount": 0, "recallIds": []}));
    assert_eq!(api.stored_task("acme", &task.id).await, before);
    assert_eq!(
        api.stored_source("acme", &task.source).await.active_tasks,
        0
    );

    api.seed_task_contact("acme", &task.id, &task.contacts[1], 3, 3)
        .await;
    let answer = recall(&api, &task.id, json!({"priority": 1})).await;
    assert_eq!(
        answer.ok(),
        &json!({"recallCount": 1, "recallIds": [task.contacts[1]]})
    );
    let after = api.stored_task("acme", &task.id).await;
    assert_eq!(after.status, TaskStatus::Running);
    assert_eq!(after.ended_at, None, "running again: endTime is null");
    assert!(after.updated_at > before.updated_at);
    assert_eq!(
        api.stored_source("acme", &task.source).await.active_tasks,
        1
    );
    let detail = api
        .get("acme", &format!("/api/task/detail/{}", task.id))
        .await;
    assert_eq!(detail.ok()["status"], 1);
    assert_eq!(detail.ok()["endTime"], Value::Null);
    // Held again (D11), and the engine can complete it again.
    api.post("acme", "/api/dataSource/delete", json!({"id": task.source}))
        .await
        .code(409);
    outbound_service::task::complete(&api.store, &crate::support::tenant("acme"), &id(&task.id))
        .await
        .unwrap();
    assert_eq!(
        api.stored_source("acme", &task.source).await.active_tasks,
        0
    );
}

/// D12: a COMPLETED task whose data source is gone recalls nothing and stays COMPLETED.
#[tokio::test]
async fn completed_task_of_a_deleted_data_source_recalls_nothing() {
    let api = TestApi::start().await;
    let task = api.task_in("acme", TaskStatus::Completed, 2).await;
    api.seed_task_contact("acme", &task.id, &task.contacts[0], 2, 1)
        .await;
    api.post("acme", "/api/dataSource/delete", json!({"id": task.source}))
        .await
        .ok();
    let before = api.stored_task("acme", &task.id).await;
    for body in [json!({}), json!({"contactIds": task.contacts})] {
        let answer = recall(&api, &task.id, body).await;
        assert_eq!(answer.ok(), &json!({"recallCount": 0, "recallIds": []}));
    }
    assert_eq!(api.stored_task("acme", &task.id).await, before);
}

/// D12, D1: a malformed recall body is 400 naming the field, and writes nothing.
#[tokio::test]
async fn recall_refuses_malformed_bodies() {
    let api = TestApi::start().await;
    let task: TaskFixture = api.task_in("acme", TaskStatus::Running, 1).await;
    const IDS: &str = "contactIds must be an array of strings";
    const PRIORITY: &str = "priority must be an integer from 1 to 5";
    let contact = &task.contacts[0];
    for (body, message) in [
        (json!({"contactIds": contact}), IDS),
        (json!({"contactIds": {"id": contact}}), IDS),
        (json!({"contactIds": [contact, 1]}), IDS),
        (json!({"contactIds": [null]}), IDS),
        (json!({"contactIds": [contact], "priority": 0}), PRIORITY),
        (json!({"contactIds": [contact], "priority": 6}), PRIORITY),
        (json!({"contactIds": [contact], "priority": "1"}), PRIORITY),
        (json!({"contactIds": [contact], "priority": 1.5}), PRIORITY),
    ] {
        recall(&api, &task.id, body).await.err(400, message);
    }
    let not_an_object = api
        .request(
            "acme",
            reqwest::Method::POST,
            &format!("/api/task/{}/recall", task.id),
        )
        .json(&json!([contact]))
        .send()
        .await
        .unwrap();
    crate::support::Answer::from(not_an_object)
        .await
        .err(400, "request body must be a JSON object");
    assert!(api.stored_task_contacts("acme", &task.id).await.is_empty());
    for missing in ["nope", "01ARZ3NDEKTSV4RRFFQ69G5FAV"] {
        recall(&api, missing, json!({}))
            .await
            .err(404, &format!("task {missing} not found"));
    }
}

/// More contacts than one transaction holds beside the task.
const LARGE: usize = 120;

/// A RUNNING task of `LARGE` contacts whose every contact failed its last call.
async fn all_failed(api: &TestApi) -> TaskFixture {
    all_failed_of(api, "acme").await
}

/// [`all_failed`], of `tenant`.
async fn all_failed_of(api: &TestApi, tenant: &str) -> TaskFixture {
    let task = api.task_in(tenant, TaskStatus::Running, LARGE).await;
    for contact in &task.contacts {
        api.seed_task_contact(tenant, &task.id, contact, 2, 1).await;
    }
    task
}

/// D32: a tenant has at most `TENANT_RUNNING_RECALLS` stored recalls being applied at once, as
/// their jobs share the dial queue's workers with every tenant's calls: beyond, 409 naming the
/// cap, and nothing changes; another tenant recalls meanwhile; once the job has applied the
/// first, its slot is free again and the refused recall goes through.
#[tokio::test]
async fn a_tenant_applies_at_most_its_running_recalls_at_once() {
    use crate::dialing_support::{fast_settings, ManualClock, DEFAULT_MIX};
    use outbound_local::inbox::DialInbox;
    let api = TestApi::start_with(|config| config.tenant_limits.running_recalls = 1).await;
    let (first, second) = (all_failed(&api).await, all_failed(&api).await);
    let other = all_failed_of(&api, "globex").await;
    recall(&api, &first.id, json!({})).await.ok();

    let before = api.snapshot().await;
    recall(&api, &second.id, json!({})).await.err(
        409,
        "this tenant already has 1 recalls running, the most it may; try again when one has \
         finished",
    );
    assert_eq!(api.snapshot().await, before, "nothing changed");
    let globex = api
        .post(
            "globex",
            &format!("/api/task/{}/recall", other.id),
            json!({}),
        )
        .await;
    assert_eq!(recalled(globex.ok()).len(), LARGE);

    let engine = api.engine(
        fast_settings(&api, DEFAULT_MIX),
        ManualClock::starting_now(),
    );
    assert_eq!(api.drain(&engine, DialInbox::Jobs).await, 2);
    assert_eq!(
        api.stored_task("acme", &first.id).await.pending_recall,
        None
    );
    let answer = recall(&api, &second.id, json!({})).await;
    assert_eq!(recalled(answer.ok()).len(), LARGE);
    assert_eq!(api.drain(&engine, DialInbox::Jobs).await, 1);
    let slots: Vec<_> = api
        .snapshot()
        .await
        .into_keys()
        .filter(|(_, sk)| sk.starts_with("JOBSLOT#RECALL#"))
        .collect();
    assert_eq!(slots, [], "every applied recall gave its slot back");
}

/// D12: a recall too large for one transaction is committed on the task at once and applied
/// by the dialer's recall job, exactly once however often the job runs; until then the task
/// cannot complete (D13).
#[tokio::test]
async fn a_large_recall_is_committed_at_once_and_applied_by_its_job() {
    use crate::dialing_support::{fast_settings, ManualClock, DEFAULT_MIX};
    use outbound_local::inbox::DialInbox;
    let api = TestApi::start().await;
    let task = all_failed(&api).await;
    let answer = recall(&api, &task.id, json!({"priority": 2})).await;
    assert_eq!(recalled(answer.ok()).len(), LARGE);
    let stored = api.stored_task("acme", &task.id).await;
    let pending = stored
        .pending_recall
        .clone()
        .expect("the recall is pending");
    assert_eq!(stored.revision, 1);
    let waiting = api.stored_task_contacts("acme", &task.id).await;
    assert!(waiting.values().all(|state| state.done && !state.recalled));
    let refused = outbound_service::task::complete(
        &api.store,
        &crate::support::tenant("acme"),
        &id(&task.id),
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused.status_code(),
        405,
        "no completion while a recall is pending"
    );

    let engine = api.engine(
        fast_settings(&api, DEFAULT_MIX),
        ManualClock::starting_now(),
    );
    assert_eq!(api.drain(&engine, DialInbox::Jobs).await, 1);
    let applied = api.stored_task_contacts("acme", &task.id).await;
    for state in applied.values() {
        assert!(state.recalled && !state.done, "{state:?}");
        assert_eq!((state.allowance, state.priority), (1 + 3, 2));
    }
    assert_eq!(api.stored_task("acme", &task.id).await.pending_recall, None);
    // The job again changes nothing.
    let before = api.snapshot().await;
    engine
        .apply_recall(&crate::support::tenant("acme"), &id(&task.id), &pending)
        .await
        .unwrap();
    assert_eq!(api.snapshot().await, before);
}

/// D12: a recall whose list cannot be stored answers an error and changes nothing.
#[tokio::test]
async fn a_large_recall_that_cannot_be_committed_changes_nothing() {
    let api = TestApi::start().await;
    let task = all_failed(&api).await;
    let before = api.snapshot().await;
    let broken = outbound_adapters::blob::Blob::from_config(&api.sdk, "no-such-bucket", true);
    let error = outbound_service::task::recall(
        &api.app.store,
        &broken,
        &api.app.dial_jobs,
        &crate::support::tenant("acme"),
        &id(&task.id),
        &[],
        5,
    )
    .await
    .unwrap_err();
    assert!([500, 503].contains(&error.status_code()), "{error}");
    assert_eq!(api.snapshot().await, before);
}

/// D12: a large recall whose job was lost is queued again by the tick a minute later.
#[tokio::test]
async fn the_tick_queues_a_lost_recall_job_again() {
    use crate::dialing_support::{fast_settings, ManualClock, DEFAULT_MIX};
    use outbound_local::inbox::DialInbox;
    let api = TestApi::start().await;
    let task = all_failed(&api).await;
    recall(&api, &task.id, json!({})).await.ok();
    let sqs = aws_sdk_sqs::Client::new(&api.sdk);
    outbound_local::poller::drain(&sqs, &api.resources.dial_queue_url, |_| async { Ok(()) })
        .await
        .unwrap();
    let clock = ManualClock::starting_now();
    let engine = api.engine(fast_settings(&api, DEFAULT_MIX), clock.clone());
    engine.tick().await.unwrap();
    api.drain(&engine, DialInbox::Jobs).await;
    assert!(api
        .stored_task("acme", &task.id)
        .await
        .pending_recall
        .is_some());
    clock.advance(std::time::Duration::from_secs(61));
    engine.tick().await.unwrap();
    api.drain(&engine, DialInbox::Jobs).await;
    assert_eq!(api.stored_task("acme", &task.id).await.pending_recall, None);
    let states = api.stored_task_contacts("acme", &task.id).await;
    assert_eq!(states.values().filter(|s| s.recalled).count(), LARGE);
}

/// D23, D28: a run that rested the task while a large recall waited for its job (it read the
/// task before the job made the contacts due) cannot keep it resting: the job's group wakes it.
#[tokio::test]
async fn a_recall_job_wakes_a_task_rested_before_it() {
    use crate::dialing_support::{fast_settings, ManualClock, DEFAULT_MIX};
    use outbound_local::inbox::DialInbox;
    let api = TestApi::start().await;
    let task = all_failed(&api).await;
    recall(&api, &task.id, json!({})).await.ok();
    let later = outbound_model::Timestamp::now().0 + 3_600_000;
    api.seed_task_attribute(
        "acme",
        &task.id,
        "idle_until",
        AttributeValue::N(later.to_string()),
    )
    .await;
    let before = api.stored_task("acme", &task.id).await;
    assert!(before.idle_until.is_some());
    let engine = api.engine(
        fast_settings(&api, DEFAULT_MIX),
        ManualClock::starting_now(),
    );
    api.drain(&engine, DialInbox::Jobs).await;
    let after = api.stored_task("acme", &task.id).await;
    assert_eq!(after.pending_recall, None, "applied");
    assert_eq!(after.idle_until, None, "the recall's group woke it");
    assert!(after.revision > before.revision);
}

/// D12, D28: a PAUSED task is not in the tick's running index, so the tick never sends its
/// lost recall job again; the next recall does, and answers 409 only until that job is applied.
#[tokio::test]
async fn a_paused_tasks_lost_recall_job_is_sent_again_by_the_next_recall() {
    use crate::dialing_support::{fast_settings, ManualClock, DEFAULT_MIX};
    use outbound_local::inbox::DialInbox;
    let api = TestApi::start().await;
    let task = all_failed(&api).await;
    let paused = api
        .post("acme", "/api/task/pause", json!({"id": task.id}))
        .await;
    assert_eq!(paused.status, 200, "{:?}", paused.body);
    recall(&api, &task.id, json!({})).await.ok();
    // The job is lost, and a minute passes without progress.
    assert_eq!(
        api.take_messages(&api.resources.dial_queue_url).await.len(),
        1
    );
    let long_ago = outbound_model::Timestamp::now().0 - 120_000;
    api.seed_task_attribute(
        "acme",
        &task.id,
        "pending_recall_at",
        AttributeValue::N(long_ago.to_string()),
    )
    .await;
    recall(&api, &task.id, json!({})).await.err(
        409,
        &format!(
            "task {} is still applying an earlier recall; try again shortly",
            task.id
        ),
    );
    let engine = api.engine(
        fast_settings(&api, DEFAULT_MIX),
        ManualClock::starting_now(),
    );
    assert_eq!(api.drain(&engine, DialInbox::Jobs).await, 1, "sent again");
    let stored = api.stored_task("acme", &task.id).await;
    assert_eq!(
        (stored.status, stored.pending_recall),
        (TaskStatus::Paused, None)
    );
    recall(&api, &task.id, json!({})).await.ok();
}

/// D12, D13: while a large recall waits for its job, the completion check neither runs nor
/// saves a bookmark, so the chunks that reopen contacts behind it cannot be missed.
#[tokio::test]
async fn no_completion_bookmark_is_saved_while_a_recall_is_pending() {
    use crate::dialing_support::{fast_settings, ManualClock, DEFAULT_MIX};
    use outbound_local::inbox::DialInbox;
    let api = TestApi::start().await;
    let task = all_failed(&api).await;
    recall(&api, &task.id, json!({})).await.ok();
    let mut settings = fast_settings(&api, DEFAULT_MIX);
    // A page far smaller than the task: a check would save a bookmark after its first page.
    settings.sweep_page = 10;
    let engine = api.engine(settings, ManualClock::starting_now());
    let tenant = crate::support::tenant("acme");
    // Runs enough to move the cursor past every contact (each was called already) and then
    // reach the completion check, several times.
    for _ in 0..(LARGE / 10 + 4) {
        let report = engine.dial(&tenant, &id(&task.id), 10).await.unwrap();
        assert!(!report.completed);
        assert_eq!(report.placed, 0);
    }
    let stored = api.stored_task("acme", &task.id).await;
    assert_eq!(stored.status, TaskStatus::Running);
    assert!(stored.pending_recall.is_some());
    assert_eq!(stored.sweep, None, "no bookmark under a pending recall");
    // Once applied, every recalled contact is due, and none is final.
    api.drain(&engine, DialInbox::Jobs).await;
    let states = api.stored_task_contacts("acme", &task.id).await;
    assert_eq!(
        states.values().filter(|s| s.recalled && !s.done).count(),
        LARGE
    );
}

/// A COMPLETED task of `source`, dialled to its end by `engine` (two attempts a contact).
async fn dialled_to_completion(
    api: &TestApi,
    engine: &crate::dialing_support::TestEngine,
    clock: &crate::dialing_support::ManualClock,
    source: &str,
    name: &str,
) -> String {
    let task = api
        .task(
            "acme",
            name,
            source,
            json!({"maxDialCount": 2, "callInterval": 10}),
        )
        .await;
    api.post("acme", "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    api.dial_until(
        engine,
        clock,
        std::time::Duration::from_secs(11),
        ("acme", &task),
        TaskStatus::Completed,
        10,
    )
    .await;
    task
}

/// The contacts of `task` whose latest outcome in it is failed (2) or no answer (3), as their
/// states say: what an implicit recall recalls (D12), sorted.
async fn failed_or_unanswered(api: &TestApi, task: &str) -> Vec<String> {
    let mut ids: Vec<String> = api
        .stored_task_contacts("acme", task)
        .await
        .into_iter()
        .filter(|(_, state)| matches!(state.last_outcome, 2 | 3))
        .map(|(id, _)| id)
        .collect();
    ids.sort();
    ids
}

/// D12: a recall without ids reads the marks the outcomes keep of the contacts whose latest
/// outcome in the task is failed or no answer (a Query of those alone, not of the task's
/// contacts), and recalls exactly the contacts it recalled when it read every contact state: a
/// contact whose last attempt failed or went unanswered, never one that answered at its second.
/// A task created before the marks reads every state, and recalls the same.
#[tokio::test]
async fn the_implicit_recall_reads_only_the_marked_contacts_and_recalls_the_same_ones() {
    use crate::dialing_support::{fast_settings, ManualClock, ALL_SUCCESS};
    use outbound_adapters::store::keys;
    const CONTACTS: usize = 30;
    let api = TestApi::start().await;
    let clock = ManualClock::starting_now();
    clock.advance_to_utc(16, 0, 0);
    let engine = api.engine(fast_settings(&api, ALL_SUCCESS), clock.clone());
    let source = api.data_source("acme", "Recall marks").await;
    // Two attempts each: failed twice, unanswered twice, failed then answered, unanswered then
    // failed, unanswered then answered, a number refused as invalid; the rest answer at once.
    let scripts = [
        "BUSY,BUSY",
        "NO_ANSWER,VOICEMAIL",
        "BUSY,ANSWERED",
        "VOICEMAIL,ERROR",
        "NO_ANSWER,ANSWERED",
        "INVALID_NUMBER",
    ];
    let mut contacts = Vec::new();
    for n in 0..CONTACTS {
        let mut body = json!({"phoneNumber": format!("+1212555{n:04}")});
        if let Some(script) = scripts.get(n) {
            body["simulatedOutcomes"] = json!(script);
        }
        let added = api
            .post(
                "acme",
                &format!("/api/dataSource/{source}/contact/add"),
                body,
            )
            .await;
        contacts.push(added.ok()["id"].as_str().unwrap().to_owned());
    }
    let mut expected = vec![
        contacts[0].clone(),
        contacts[1].clone(),
        contacts[3].clone(),
        contacts[5].clone(),
    ];
    expected.sort();

    let task = dialled_to_completion(&api, &engine, &clock, &source, "Marked").await;
    assert_eq!(failed_or_unanswered(&api, &task).await, expected);
    api.calls.items().take();
    let answer = recall(&api, &task, json!({})).await;
    let read = api.calls.items().take();
    assert_eq!(recalled(answer.ok()), expected);
    // The Query read the 4 marks, not the 30 states.
    assert_eq!(read.scanned, expected.len(), "{read}");
    assert_eq!(
        api.stored_task("acme", &task).await.status,
        TaskStatus::Running,
        "requeued with its recall (D10)"
    );

    // A task as one created before the marks: its outcomes left none.
    let old = dialled_to_completion(&api, &engine, &clock, &source, "Unmarked").await;
    assert_eq!(failed_or_unanswered(&api, &old).await, expected);
    let (owner, old_id) = (crate::support::tenant("acme"), id(&old));
    let dynamodb = api.dynamodb();
    dynamodb
        .update_item()
        .table_name(api.store.table())
        .key(keys::PK, AttributeValue::S(keys::tenant(&owner)))
        .key(keys::SK, AttributeValue::S(keys::task(&old_id)))
        .update_expression("REMOVE recall_marks")
        .send()
        .await
        .unwrap();
    for contact in &expected {
        dynamodb
            .delete_item()
            .table_name(api.store.table())
            .key(
                keys::PK,
                AttributeValue::S(keys::task_contacts(&owner, &old_id)),
            )
            .key(keys::SK, AttributeValue::S(keys::recallable(&id(contact))))
            .send()
            .await
            .unwrap();
    }
    api.calls.items().take();
    let answer = recall(&api, &old, json!({})).await;
    let read = api.calls.items().take();
    assert_eq!(recalled(answer.ok()), expected);
    assert!(read.scanned >= CONTACTS, "every state read: {read}");
}
