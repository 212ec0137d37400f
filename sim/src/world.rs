//! One seed's world and its play: tenants with their settings and do-not-call lists, data
//! sources of contacts in several zones, published tasks, and the engine over them with caps and
//! capacity shards drawn from the seed; then a storm of faults and changes, and a calm in which
//! every task must end.

use crate::invariants::Checker;
use crate::mailbox::Mailbox;
use crate::provider::{ProviderFaults, SimProvider, SimQueue};
use crate::wire::{DbFaults, Wire};
use crate::{Outcome, Seeded};
use axum::body::Body;
use chrono_tz::Tz;
use outbound_adapters::store::rate::RequestLimiter;
use outbound_adapters::store::Store;
use outbound_app::config::Config;
use outbound_app::App;
use outbound_dialing::engine::Engine;
use outbound_model::job::DialJob;
use outbound_model::plan::Clock;
use outbound_model::simulation::Bug;
use outbound_model::{TaskStatus, Timestamp};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tower::ServiceExt;

const TABLE: &str = "outbound-sim";
const BUCKET: &str = "outbound-sim-files";
const RECLAIM_QUEUE: &str = "https://sqs.sim/reclaim";
const EXPORT_QUEUE: &str = "https://sqs.sim/export";
const DIAL_QUEUE: &str = "https://sqs.sim/dial";
const EVENTS_QUEUE: &str = "https://sqs.sim/call-events";
/// 2026-01-05 00:00 UTC, a Monday.
const EPOCH: i64 = 1_767_571_200_000;
const MINUTE_MS: i64 = 60_000;
/// The calm's bound: every task with work left ends within it once faults stop.
pub const CALM_MINUTES: u32 = 24 * 60;

/// The engine's clock: the simulation's virtual time.
struct VirtualClock(Seeded);

impl Clock for VirtualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.now_ms())
    }
}

/// The SDK's clock: virtual time too, so what it stamps on a request (its signature's date) is
/// the simulation's time, as every other clock the service reads.
#[derive(Debug)]
struct VirtualTime(Seeded);

impl aws_smithy_async::time::TimeSource for VirtualTime {
    fn now(&self) -> std::time::SystemTime {
        let millis = u64::try_from(self.0.now_ms()).unwrap_or_default();
        std::time::UNIX_EPOCH + Duration::from_millis(millis)
    }
}

/// A tenant as the world made it.
#[derive(Clone, Debug)]
pub struct SimTenant {
    pub name: String,
    /// Local calling hours, in minutes of the day, `[start, end)`, each from when it was set.
    pub calling_hours: Vec<(i64, Option<(u32, u32)>)>,
    /// At most this many calls to a number within this many milliseconds, each from when it
    /// was set.
    pub cap: Vec<(i64, Option<(usize, i64)>)>,
    /// Each number on its do-not-call list, and since when.
    pub listed: BTreeMap<String, i64>,
    /// The agent queues the operator assigned it (D30).
    pub queues: Vec<String>,
}

/// How an agent-paced task paces its calls (D30), as the world set it.
#[derive(Clone, Debug)]
pub struct SimPacing {
    pub queue: String,
    /// `Some(callsPerAgent)` progressive; `None` predictive.
    pub calls_per_agent: Option<f64>,
}

/// A task as the world made it.
#[derive(Clone, Debug)]
pub struct SimTask {
    pub tenant: usize,
    pub id: String,
    pub source: String,
    pub max_dial: u32,
    pub paused: bool,
    pub stopped: bool,
    pub contacts: Vec<String>,
    /// `None`: agentless.
    pub pacing: Option<SimPacing>,
    /// The segments its filter dials (D31); `None`: every contact.
    pub filter: Option<Vec<&'static str>>,
    /// Its schedule (D31), milliseconds.
    pub start_at: Option<i64>,
    pub end_at: Option<i64>,
    /// The callbacks the API promised its contacts (D31): contact, when set, when due.
    pub callbacks: Vec<(String, i64, i64)>,
}

impl SimTask {
    /// Whether it dials no more by `at`: stopped, or its schedule's end come.
    pub fn over_by(&self, at: i64) -> bool {
        self.stopped || self.end_at.is_some_and(|end| end <= at)
    }

    /// The callbacks promised to `contact`.
    pub fn callbacks_of<'a>(&'a self, contact: &'a str) -> impl Iterator<Item = (i64, i64)> + 'a {
        (self.callbacks.iter())
            .filter(move |(of, _, _)| of == contact)
            .map(|(_, set_at, at)| (*set_at, *at))
    }
}

/// The segments a contact is in (its `segment` field), which tasks' filters select (D31).
pub const SEGMENTS: [&str; 3] = ["a", "b", "c"];

pub struct World {
    pub seed: u64,
    pub seeded: Seeded,
    pub engine: Engine<SimProvider>,
    pub provider: SimProvider,
    pub mailbox: Arc<Mutex<Mailbox>>,
    pub tenants: Vec<SimTenant>,
    pub tasks: Vec<SimTask>,
    /// Each contact's number and zone, by contact id.
    pub contacts: BTreeMap<String, (String, Tz)>,
    /// Each contact's segment (D31), by contact id.
    pub segments: BTreeMap<String, &'static str>,
    wire: Wire,
    router: axum::Router,
    jwt: outbound_auth::LocalJwt,
    checker: Checker,
    steps: usize,
    killed: usize,
    redelivered: usize,
    storming: bool,
    _simulated: outbound_model::simulation::Guard,
}

/// The US federal calling hours, 08:00-21:00, in minutes of the day.
const FEDERAL_HOURS: (u32, u32) = (8 * 60, 21 * 60);

/// Calling hours as the settings' API spells them (`null`: none).
fn hours_json(hours: Option<(u32, u32)>) -> Value {
    let clock = |minute: u32| format!("{:02}:{:02}", minute / 60, minute % 60);
    hours.map_or(
        Value::Null,
        |(start, end)| json!({"start": clock(start), "end": clock(end)}),
    )
}

const ZONES: [Tz; 4] = [
    chrono_tz::America::New_York,
    chrono_tz::America::Los_Angeles,
    chrono_tz::America::Chicago,
    chrono_tz::Europe::London,
];

impl World {
    pub async fn build(seed: u64, planted: Option<Bug>) -> Result<World, String> {
        // The day starts between 12:00 and 18:00 UTC: where the calling hours of each zone stand
        // differs with the seed.
        let hour = fastrand::Rng::with_seed(seed ^ 0x5EED).i64(12..=18);
        let seeded = Seeded::new(seed, EPOCH + hour * 3_600_000);
        let clock = seeded.clone();
        let simulated = outbound_model::simulation::enter(move || clock.now_ms(), seed, planted);
        let mailbox = Arc::new(Mutex::new(Mailbox::default()));
        let wire = Wire::new(mailbox.clone(), seeded.clone());
        let shards = 1 + seeded.below(3) as u32;
        let max_in_flight = shards + 1 + seeded.below(8) as u32;
        let per_task = 1 + seeded.below(u64::from(max_in_flight)) as u32;
        // At least one call a second in every shard's part of the rate.
        let rate = shards + seeded.below(5) as u32;
        // How long a start in doubt waits before it is looked at again: 1-5 minutes.
        let reconcile_after = 60 * (1 + seeded.below(5));
        // Dial runs a minute, 1-4: the later ones pace agent-paced tasks again (D30).
        let runs_per_tick = 1 + seeded.below(4);
        // The running-task and calls-in-flight indexes' partitions: 1, 2, 4 or 16 (the
        // deployments' own), each read by every sweep.
        let index_partitions = [1, 2, 4, 16][seeded.below(4) as usize];
        // The partitions a data source's contacts are spread over: 1, 2, 4 or the deployments'
        // 8, each read by a run's read of contacts in order.
        let contact_shards = [1, 2, 4, 8][seeded.below(4) as usize];
        let config = Config::from_lookup(|name| {
            Some(match name {
                "TABLE_NAME" => TABLE.into(),
                "BUCKET_NAME" => BUCKET.into(),
                "RECLAIM_QUEUE_URL" => RECLAIM_QUEUE.into(),
                "EXPORT_QUEUE_URL" => EXPORT_QUEUE.into(),
                "DIAL_QUEUE_URL" => DIAL_QUEUE.into(),
                "CALL_EVENTS_QUEUE_URL" => EVENTS_QUEUE.into(),
                "AUTH_MODE" => "local".into(),
                "OUTBOUND_DEV_STACK" => "true".into(),
                "DIAL_RECONCILE_AFTER_SECONDS" => reconcile_after.to_string(),
                "DIAL_MAX_CALL_SECONDS" => "3600".into(),
                "DIAL_CAPACITY_SHARDS" => shards.to_string(),
                "DIAL_MAX_IN_FLIGHT" => max_in_flight.to_string(),
                "DIAL_MAX_IN_FLIGHT_PER_TASK" => per_task.to_string(),
                "DIAL_RATE_PER_SECOND" => rate.to_string(),
                "DIAL_RUNS_PER_TICK" => runs_per_tick.to_string(),
                "DIAL_INDEX_PARTITIONS" => index_partitions.to_string(),
                "CONTACT_SHARDS" => contact_shards.to_string(),
                _ => return None,
            })
        })
        .map_err(|error| format!("configuration: {error}"))?;
        // Under `make test` the functions' requests are checked against their roles
        // (scripts/iam_check.py): these names stand for the template's resources.
        outbound_adapters::aws::actions::name_resources(&[
            ("TABLE_NAME", TABLE),
            ("BUCKET_NAME", BUCKET),
            ("RECLAIM_QUEUE_URL", RECLAIM_QUEUE),
            ("EXPORT_QUEUE_URL", EXPORT_QUEUE),
            ("DIAL_QUEUE_URL", DIAL_QUEUE),
            ("CALL_EVENTS_QUEUE_URL", EVENTS_QUEUE),
        ]);
        let sdk = sdk_config(&wire, &seeded);
        // The store's requests, and the request limiter's (tried once, as its client is built),
        // go to the database through the store's own seam; the other clients' through the
        // SDK's HTTP seam.
        let store = App::store(&config, &sdk).in_process(Arc::new(wire.clone()));
        let limiter = RequestLimiter::over(
            Store::new(
                aws_sdk_dynamodb::Client::new(&sdk),
                config.rate_table.clone(),
            )
            .in_process(Arc::new(wire.without_retries())),
            config.tenant_limits.requests,
        );
        let app = App::with_store_and_limiter(config, &sdk, store, limiter);
        outbound_local::provision::ensure_table(&aws_sdk_dynamodb::Client::new(&sdk), TABLE)
            .await
            .map_err(|error| format!("table: {error}"))?;
        let provider = SimProvider::new(mailbox.clone(), EVENTS_QUEUE.into(), seeded.clone());
        let engine = Engine::over(
            &app,
            provider.clone(),
            Arc::new(VirtualClock(seeded.clone())),
        );
        let jwt = outbound_local::local_jwt(&app.config);
        let router = outbound_api::local_api(app).map_err(|error| format!("api: {error}"))?;
        seeded.note(&format!(
            "world: {shards} shards, {max_in_flight} in flight, {per_task} a task, {rate}/s, \
             reconciled after {reconcile_after} s, {runs_per_tick} runs a tick, \
             {index_partitions} index partitions, {contact_shards} contact shards"
        ));
        let mut world = World {
            seed,
            seeded: seeded.clone(),
            engine,
            provider,
            mailbox,
            tenants: Vec::new(),
            tasks: Vec::new(),
            contacts: BTreeMap::new(),
            segments: BTreeMap::new(),
            wire,
            router,
            jwt,
            checker: Checker::default(),
            steps: 0,
            killed: 0,
            redelivered: 0,
            storming: false,
            _simulated: simulated,
        };
        world.populate().await?;
        Ok(world)
    }

    /// `POST path` with `body` as an administrator of tenant `tenant`: the status and the
    /// answer.
    async fn post(&self, tenant: &str, path: &str, body: Value) -> (u16, Value) {
        self.post_as(&self.jwt.issue_admin(tenant, 3600), path, body)
            .await
    }

    /// `POST path` with `body` and the bearer token `token`.
    async fn post_as(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        let request = http::Request::post(path)
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .expect("a request");
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("the router answers");
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap_or_default();
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, value)
    }

    async fn must_post(&self, tenant: &str, path: &str, body: Value) -> Result<Value, String> {
        match self.post(tenant, path, body.clone()).await {
            (200, answer) => Ok(answer["data"].clone()),
            (status, answer) => Err(format!("{path} {body} answered {status}: {answer}")),
        }
    }

    /// The tenants, their settings and lists, data sources and published tasks.
    async fn populate(&mut self) -> Result<(), String> {
        let s = self.seeded.clone();
        // Most worlds small, as small worlds find most bugs: one tenant with a task or two, or
        // two tenants with one each. One in ten larger: one to three tenants with one to three
        // tasks each, and more numbers.
        let large = s.chance(1_000);
        let tasks_of_each: Vec<u64> = if large {
            (0..1 + s.below(3)).map(|_| 1 + s.below(3)).collect()
        } else {
            match s.below(3) {
                0 => vec![1],
                1 => vec![2],
                _ => vec![1, 1],
            }
        };
        for (t, tasks) in tasks_of_each.into_iter().enumerate() {
            let name = format!("tenant{t}");
            let calling_hours = s.chance(5_000).then_some(FEDERAL_HOURS);
            let cap = s
                .chance(5_000)
                .then(|| (1 + s.below(3) as usize, 3_600_000));
            let mut settings = json!({});
            if calling_hours.is_some() {
                settings["callingHours"] = hours_json(calling_hours);
            }
            if let Some((most, _)) = cap {
                settings["frequencyCap"] = json!({"maxCalls": most, "periodHours": 1});
            }
            self.must_post(&name, "/api/settings/update", settings)
                .await?;
            // A tenant with agent queues has more numbers, so that pacing holds calls back.
            let paced = s.chance(5_000);
            let count = match (paced, large) {
                (true, true) => 6 + s.below(15),
                (true, false) => 4 + s.below(9),
                (false, true) => 2 + s.below(12),
                (false, false) => 2 + s.below(6),
            };
            let numbers: Vec<(String, Tz)> = (0..count)
                .map(|n| {
                    let zone = ZONES[s.below(ZONES.len() as u64) as usize];
                    (format!("+1212555{:04}", 1000 + t as u64 * 100 + n), zone)
                })
                .collect();
            let mut tenant = SimTenant {
                name: name.clone(),
                calling_hours: vec![(s.now_ms(), calling_hours)],
                cap: vec![(s.now_ms(), cap)],
                listed: BTreeMap::new(),
                queues: Vec::new(),
            };
            // Half the tenants have agent queues (D30): 1-2, each of 1-5 agents handling a
            // call in 20-120 s.
            if paced {
                tenant.queues = (0..1 + s.below(2)).map(|n| format!("q{t}-{n}")).collect();
                let queues: Vec<Value> = (tenant.queues.iter())
                    .map(|id| json!({"id": id, "name": id}))
                    .collect();
                let operator = self.jwt.issue_scoped("ops", 3600, &["outbound/operator"]);
                let body = json!({"tenant": name, "callerIds": [], "contactFlows": [],
                                  "queues": queues});
                match self
                    .post_as(&operator, "/api/operator/telephony/update", body)
                    .await
                {
                    (200, _) => {}
                    (status, answer) => {
                        return Err(format!("queues of {name} answered {status}: {answer}"))
                    }
                }
                for id in &tenant.queues {
                    let queue =
                        SimQueue::new(1 + s.below(5) as u32, 1_000 * (20 + s.below(101) as i64));
                    s.note(&format!(
                        "{id}: {} agents, {} ms a call",
                        queue.agents, queue.handle_ms
                    ));
                    self.provider.set_queue(id, queue);
                }
            }
            if s.chance(5_000) {
                let listed = numbers[s.below(numbers.len() as u64) as usize].0.clone();
                self.must_post(&name, "/api/dnc/add", json!({"phoneNumber": listed}))
                    .await?;
                tenant.listed.insert(listed, s.now_ms());
            }
            self.tenants.push(tenant);
            for _ in 0..tasks {
                self.add_task(t, &numbers).await?;
            }
        }
        Ok(())
    }

    async fn add_task(&mut self, tenant: usize, numbers: &[(String, Tz)]) -> Result<(), String> {
        let s = self.seeded.clone();
        let name = self.tenants[tenant].name.clone();
        let source = self
            .must_post(
                &name,
                "/api/dataSource/add",
                json!({"dataSourceName": format!("Source {}", s.below(1 << 40))}),
            )
            .await?["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut contacts = Vec::new();
        for (number, zone) in numbers {
            if !s.chance(7_000) {
                continue;
            }
            contacts.push(self.add_to_source(&name, &source, number, *zone).await?);
        }
        if contacts.is_empty() {
            return Ok(());
        }
        let max_dial = 1 + s.below(3) as u32;
        let mut fields = json!({"taskName": format!("Task {}", s.below(1 << 40)),
               "dataSourceId": source, "maxDialCount": max_dial, "callInterval": 60,
               "timeZone": "UTC", "priority": 1 + s.below(5),
               "retryRules": [{"reason": "BUSY", "delaySeconds": 30}]});
        // Most of the tasks of a tenant with queues are agent-paced, on its first queue mostly,
        // so that tasks share a queue.
        // A task in four has a filter of two segments of three; one in five a schedule (D31):
        // its start up to 5 minutes ahead, its end 5-30 minutes after it (within the storm or
        // the calm).
        let filter = s.chance(2_500).then(|| {
            let out = s.below(SEGMENTS.len() as u64) as usize;
            let kept: Vec<&'static str> = (SEGMENTS.iter().enumerate())
                .filter(|(at, _)| *at != out)
                .map(|(_, segment)| *segment)
                .collect();
            fields["filter"] = json!([{"field": "segment", "op": "in", "value": kept}]);
            kept
        });
        let (mut start_at, mut end_at) = (None, None);
        if s.chance(2_000) {
            let start = s.now_ms() + s.below(300_000) as i64;
            let end = start + 300_000 + s.below(1_500_000) as i64;
            fields["startAt"] = json!(Timestamp(start).rfc3339());
            fields["endAt"] = json!(Timestamp(end).rfc3339());
            (start_at, end_at) = (Some(start), Some(end));
        }
        let queues = &self.tenants[tenant].queues;
        let pacing = (!queues.is_empty() && s.chance(7_000)).then(|| {
            let queue = queues[if s.chance(7_500) {
                0
            } else {
                s.below(queues.len() as u64) as usize
            }]
            .clone();
            fields["queueId"] = json!(queue);
            if s.chance(5_000) {
                let calls_per_agent = [1.0, 1.5, 2.0, 3.0][s.below(4) as usize];
                fields["dialingMode"] = json!("PROGRESSIVE");
                fields["callsPerAgent"] = json!(calls_per_agent);
                SimPacing {
                    queue,
                    calls_per_agent: Some(calls_per_agent),
                }
            } else {
                fields["dialingMode"] = json!("PREDICTIVE");
                fields["abandonmentTarget"] = json!([0, 3, 5, 10][s.below(4) as usize]);
                SimPacing {
                    queue,
                    calls_per_agent: None,
                }
            }
        });
        let task = self.must_post(&name, "/api/task/add", fields).await?["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.must_post(&name, "/api/task/publish", json!({"id": task}))
            .await?;
        self.seeded.note(&format!(
            "task {task} of {name}: {} contacts, {max_dial} dials, {pacing:?}, filter \
             {filter:?}, schedule {start_at:?}-{end_at:?}",
            contacts.len()
        ));
        self.tasks.push(SimTask {
            tenant,
            id: task,
            source,
            max_dial,
            paused: false,
            stopped: false,
            contacts,
            pacing,
            filter,
            start_at,
            end_at,
            callbacks: Vec::new(),
        });
        Ok(())
    }

    /// The storm, then the calm, the invariants checked after every step; then the end's checks.
    pub async fn play(&mut self) -> Result<Outcome, String> {
        let storm = 10 + self.seeded.below(15) as u32;
        // In one storm in two the provider is out for 1-4 minutes: every start fails in doubt.
        let outage = self.seeded.chance(5_000).then(|| {
            let from = self.seeded.below(u64::from(storm)) as u32;
            from..from + 1 + self.seeded.below(4) as u32
        });
        for minute in 0..storm {
            let out = outage.as_ref().is_some_and(|out| out.contains(&minute));
            self.set_faults(Some(out));
            self.change().await?;
            self.minute().await?;
        }
        self.set_faults(None);
        // The calm: agents back at every queue left without, tasks resumed.
        for tenant in &self.tenants {
            for queue in &tenant.queues {
                if self.provider.agents_of(queue) == 0 {
                    self.set_agents(queue, 1 + self.seeded.below(3) as u32);
                }
            }
        }
        // As stored: a pause or a stop whose answer the storm lost (a write committed, then
        // answered with an error) took effect though the world did not record it.
        for at in 0..self.tasks.len() {
            match self.stored_task(&self.tasks[at]).await?.status {
                TaskStatus::Paused => {
                    let (tenant, id) = (
                        self.tenants[self.tasks[at].tenant].name.clone(),
                        self.tasks[at].id.clone(),
                    );
                    self.must_post(&tenant, "/api/task/resume", json!({"id": id}))
                        .await?;
                }
                TaskStatus::Stopped => self.tasks[at].stopped = true,
                _ => {}
            }
            self.tasks[at].paused = false;
        }
        let calm_ends = self.seeded.now_ms() + i64::from(CALM_MINUTES) * MINUTE_MS;
        let calm_began = self.seeded.now_ms();
        loop {
            let running = self.running().await?;
            if running.is_empty()
                && self.mailbox.lock().unwrap().waiting(EVENTS_QUEUE) == 0
                && !self.calls_unsettled().await?
            {
                break;
            }
            if self.seeded.now_ms() >= calm_ends {
                let mut stuck = Vec::new();
                for task in &running {
                    let sim = (self.tasks.iter())
                        .find(|sim| sim.id == task.id.as_str())
                        .ok_or("a running task of no task of the world")?;
                    let tenant = self.tenant_of(sim)?;
                    let contacts = (self.engine.store)
                        .task_contacts(&tenant, &task.id)
                        .await
                        .map_err(|error| format!("read a task's contacts: {error}"))?;
                    let numbers: Vec<_> = (contacts.iter())
                        .filter(|contact| !contact.done)
                        .map(|contact| self.contacts.get(contact.contact_id.as_str()))
                        .collect();
                    stuck.push(format!(
                        "{task:?}\n  its contacts: {contacts:?}\n  the numbers of those not done: \
                         {numbers:?}\n  the tenants: {:?}",
                        self.tenants
                    ));
                }
                let in_flight = self.engine.store.calls_in_flight().await;
                return Err(format!(
                    "tasks still running, or calls without their outcome, {CALM_MINUTES} \
                     minutes after the faults stopped (the service's calls in flight: \
                     {in_flight:?}): {}",
                    stuck.join("\n")
                ));
            }
            // Nothing queued and every task idle until a time its run named (a retry, a
            // window, calling hours, the frequency cap): the ticks before the minute of the
            // earliest do nothing, and are skipped, as when EventBridge drops them.
            let now = self.seeded.now_ms();
            if self.mailbox.lock().unwrap().next_visible().is_none() {
                if let Some(wake) = running
                    .iter()
                    .map(|task| task.idle_until.map_or(now, |until| until.0))
                    .min()
                {
                    let skipped = ((wake.min(calm_ends) - now) / MINUTE_MS).max(0);
                    if skipped > 0 {
                        self.seeded.note(&format!("{skipped} idle minutes"));
                        tokio::time::sleep(Duration::from_millis((skipped * MINUTE_MS) as u64))
                            .await;
                        continue;
                    }
                }
            }
            self.minute().await?;
        }
        let calm = ((self.seeded.now_ms() - calm_began) / MINUTE_MS) as u32;
        // What is still queued (late or repeated outcome events) is delivered, then the end.
        self.minute().await?;
        self.minute().await?;
        crate::invariants::at_end(self).await?;
        Ok(Outcome {
            seed: self.seed,
            trace: self.seeded.trace(),
            calls: self.provider.placed().len(),
            steps: self.steps,
            killed: self.killed,
            redelivered: self.redelivered,
            calm_minutes: calm,
        })
    }

    /// The storm's faults on (`Some`, with whether the provider is out) or off (`None`).
    fn set_faults(&mut self, storm: Option<bool>) {
        if storm.is_some() != self.storming {
            self.seeded
                .note(if storm.is_some() { "storm" } else { "calm" });
        }
        self.storming = storm.is_some();
        self.wire.set_faults(storm.map(|_| DbFaults {
            throttled: 200,
            lost_after_commit: 150,
            conflict: 300,
        }));
        self.provider.set_faults(storm.map(|outage| ProviderFaults {
            start_failed: 500,
            start_lost: 500,
            throttled: 500,
            event_lost: 400,
            event_late: 400,
            event_twice: 400,
            outage,
            agents_unread: 200,
        }));
    }

    /// A change of the world under its tasks, sometimes: a number listed, a task paused or
    /// resumed, a task stopped, a contact deleted.
    async fn change(&mut self) -> Result<(), String> {
        let s = self.seeded.clone();
        if self.tasks.is_empty() {
            return Ok(());
        }
        let at = s.below(self.tasks.len() as u64) as usize;
        let task = self.tasks[at].clone();
        let tenant = self.tenants[task.tenant].name.clone();
        match s.below(100) {
            0..=4 => {
                let contact = &task.contacts[s.below(task.contacts.len() as u64) as usize];
                let number = self.contacts[contact].0.clone();
                let (status, _) = self
                    .post(&tenant, "/api/dnc/add", json!({"phoneNumber": number}))
                    .await;
                if status == 200 {
                    self.tenants[task.tenant]
                        .listed
                        .entry(number.clone())
                        .or_insert(s.now_ms());
                    s.note(&format!("listed {number}"));
                }
            }
            5..=14 if !task.stopped => {
                let op = if task.paused { "resume" } else { "pause" };
                let (status, _) = self
                    .post(&tenant, &format!("/api/task/{op}"), json!({"id": task.id}))
                    .await;
                if status == 200 {
                    self.tasks[at].paused = !task.paused;
                    s.note(&format!("{op} {}", task.id));
                }
            }
            15..=16 if !task.stopped => {
                let (status, _) = self
                    .post(&tenant, "/api/task/stop", json!({"id": task.id}))
                    .await;
                if status == 200 {
                    self.tasks[at].stopped = true;
                    s.note(&format!("stopped {}", task.id));
                }
            }
            22..=24 => self.change_settings(task.tenant).await?,
            25..=29 if !task.stopped => self.add_contact(at).await?,
            30..=34 if !task.stopped => self.set_callback(at).await?,
            17..=21 if !self.tenants[task.tenant].queues.is_empty() => {
                // Agents log in or out.
                let queues = &self.tenants[task.tenant].queues;
                let queue = queues[s.below(queues.len() as u64) as usize].clone();
                self.set_agents(&queue, s.below(5) as u32);
            }
            _ => {}
        }
        Ok(())
    }

    /// The tenant's calling hours or frequency cap changed (set, moved or cleared) under its
    /// running tasks. Written with the database's faults held off, so the world knows what
    /// took effect: a change the storm answered with an error may have been written or not.
    async fn change_settings(&mut self, tenant: usize) -> Result<(), String> {
        let s = self.seeded.clone();
        let name = self.tenants[tenant].name.clone();
        let body = if s.chance(5_000) {
            let hours = [None, Some(FEDERAL_HOURS), Some((10 * 60, 18 * 60))][s.below(3) as usize];
            self.tenants[tenant].calling_hours.push((s.now_ms(), hours));
            json!({ "callingHours": hours_json(hours) })
        } else {
            let cap = s
                .chance(6_667)
                .then(|| (1 + s.below(3) as usize, 3_600_000));
            self.tenants[tenant].cap.push((s.now_ms(), cap));
            json!({ "frequencyCap": cap.map(|(most, _)| json!({"maxCalls": most, "periodHours": 1})) })
        };
        let held = self.wire.faults_held_off();
        self.must_post(&name, "/api/settings/update", body.clone())
            .await?;
        drop(held);
        s.note(&format!("{name} settings {body}"));
        Ok(())
    }

    /// A contact added to the data source of task `at` while the task runs or is paused: it is
    /// to be called like the others before the task completes (D11). Read and written with the
    /// database's faults held off, so the world knows whether it was added and to which task.
    async fn add_contact(&mut self, at: usize) -> Result<(), String> {
        let s = self.seeded.clone();
        let (tenant, source) = (self.tasks[at].tenant, self.tasks[at].source.clone());
        let name = self.tenants[tenant].name.clone();
        let number = format!("+1212556{:04}", self.contacts.len());
        let zone = ZONES[s.below(ZONES.len() as u64) as usize];
        let held = self.wire.faults_held_off();
        let status = self.stored_task(&self.tasks[at]).await?.status;
        if !matches!(status, TaskStatus::Running | TaskStatus::Paused) {
            return Ok(());
        }
        let id = self.add_to_source(&name, &source, &number, zone).await?;
        drop(held);
        s.note(&format!("contact {id} ({number}) added to {source}"));
        self.tasks[at].contacts.push(id);
        Ok(())
    }

    /// A callback promised by the API to a contact of task `at` (D31), 1-11 minutes ahead.
    /// Written with the database's faults held off, so the world knows whether it was set; one
    /// refused (a call of the contact in flight, its three callbacks had, outside its calling
    /// hours, the task over) changes nothing.
    async fn set_callback(&mut self, at: usize) -> Result<(), String> {
        let s = self.seeded.clone();
        let task = self.tasks[at].clone();
        let contact = task.contacts[s.below(task.contacts.len() as u64) as usize].clone();
        let due = s.now_ms() + 60_000 + s.below(600_000) as i64;
        let name = self.tenants[task.tenant].name.clone();
        let held = self.wire.faults_held_off();
        let body = json!({"taskId": task.id, "contactId": contact, "at": Timestamp(due).rfc3339()});
        let (status, answer) = self.post(&name, "/api/task/callback", body).await;
        drop(held);
        s.note(&format!("callback {contact} at {due}: {status} {answer}"));
        if status != 200 {
            return Ok(());
        }
        // Set again while pending, a callback moves (one whose time has not come is pending).
        let now = s.now_ms();
        let callbacks = &mut self.tasks[at].callbacks;
        match (callbacks.iter_mut()).find(|(of, _, pending)| *of == contact && *pending > now) {
            Some(pending) => pending.2 = due,
            None => callbacks.push((contact, now, due)),
        }
        Ok(())
    }

    /// Adds a contact of `number` in `zone` to data source `source` of tenant `name`: its id,
    /// known to the world from now.
    async fn add_to_source(
        &mut self,
        name: &str,
        source: &str,
        number: &str,
        zone: Tz,
    ) -> Result<String, String> {
        let segment = SEGMENTS[self.seeded.below(SEGMENTS.len() as u64) as usize];
        let added = self
            .must_post(
                name,
                &format!("/api/dataSource/{source}/contact/add"),
                json!({"phoneNumber": number, "timeZone": zone.name(), "segment": segment}),
            )
            .await?;
        let id = added["id"].as_str().unwrap_or_default().to_owned();
        self.contacts.insert(id.clone(), (number.to_owned(), zone));
        self.segments.insert(id.clone(), segment);
        Ok(id)
    }

    /// Queue `queue` to `agents` agents from now (they log in or out); those on a call keep it.
    fn set_agents(&self, queue: &str, agents: u32) {
        self.provider.set_agents(queue, agents);
        self.seeded.note(&format!("{queue}: {agents} agents"));
    }

    /// One minute: the tick, then the queues' messages until the next, a step at a time.
    async fn minute(&mut self) -> Result<(), String> {
        let next_tick = self.seeded.now_ms() + MINUTE_MS;
        let killed_after = self.kill_after();
        self.provider.pass_begins();
        let tick = self.engine.tick();
        match killed_after {
            Some(after) => {
                if tokio::time::timeout(after, tick).await.is_err() {
                    self.killed += 1;
                    self.seeded.note("tick killed");
                }
            }
            None => {
                if let Err(error) = tick.await {
                    self.seeded.note(&format!("tick failed: {error}"));
                }
            }
        }
        self.check().await?;
        loop {
            let now = self.seeded.now_ms();
            if now >= next_tick {
                return Ok(());
            }
            let batch = self.receive();
            if batch.is_empty() {
                let next = self
                    .mailbox
                    .lock()
                    .unwrap()
                    .next_visible()
                    .unwrap_or(next_tick)
                    .clamp(now + 1, next_tick);
                tokio::time::sleep(Duration::from_millis((next - now) as u64)).await;
                continue;
            }
            let handled = futures::future::join_all(
                batch
                    .iter()
                    .map(|(url, message)| self.handle(url, &message.body)),
            )
            .await;
            for ((url, message), done) in batch.iter().zip(handled) {
                if done {
                    let mut mailbox = self.mailbox.lock().unwrap();
                    if self.storming && self.seeded.chance(500) {
                        mailbox.again(url, message.id, &self.seeded);
                        self.redelivered += 1;
                    } else {
                        mailbox.delete(url, message.id);
                    }
                }
            }
            self.steps += 1;
            self.check().await?;
        }
    }

    /// The step's invariants.
    async fn check(&mut self) -> Result<(), String> {
        let mut checker = std::mem::take(&mut self.checker);
        let checked = checker.check_step(self).await;
        self.checker = checker;
        checked
    }

    /// Up to three visible messages of each queue, picked by the seed.
    fn receive(&self) -> Vec<(&'static str, crate::mailbox::Message)> {
        let mut batch = Vec::new();
        let mut mailbox = self.mailbox.lock().unwrap();
        for url in [DIAL_QUEUE, EVENTS_QUEUE] {
            for _ in 0..1 + self.seeded.below(3) {
                if let Some(message) = mailbox.receive(url, &self.seeded) {
                    batch.push((url, message));
                }
            }
        }
        batch
    }

    /// While storming, one handler in twenty dies after a virtual time drawn from the seed.
    fn kill_after(&self) -> Option<Duration> {
        (self.storming && self.seeded.chance(500))
            .then(|| Duration::from_micros(200 + self.seeded.below(20_000)))
    }

    /// Handles one message as its function would: whether it may be deleted.
    async fn handle(&self, url: &str, body: &str) -> bool {
        let work = async {
            if url == DIAL_QUEUE {
                outbound_dialing::inbox::dial_message(&self.engine, body.to_owned()).await
            } else {
                outbound_dialing::inbox::call_event_message(&self.engine, body.to_owned()).await
            }
        };
        let job = (url == DIAL_QUEUE)
            .then(|| serde_json::from_str::<DialJob>(body).ok())
            .flatten();
        if job == Some(DialJob::Pace) {
            self.provider.pass_begins();
        }
        let by_run = matches!(job, Some(DialJob::Dial { .. }));
        let work = crate::provider::BY_RUN.scope(by_run, work);
        let answer = match self.kill_after() {
            Some(after) => match tokio::time::timeout(after, work).await {
                Ok(answer) => answer,
                Err(_) => {
                    self.seeded.note("handler killed");
                    return false;
                }
            },
            None => work.await,
        };
        match answer {
            Ok(()) => true,
            Err(error) => {
                self.seeded.note(&format!("handler failed: {error}"));
                false
            }
        }
    }

    /// The tasks not over yet (RUNNING or PAUSED), as stored.
    async fn running(&self) -> Result<Vec<outbound_model::Task>, String> {
        let mut running = Vec::new();
        for task in &self.tasks {
            let stored = self.stored_task(task).await?;
            if matches!(stored.status, TaskStatus::Running | TaskStatus::Paused) {
                running.push(stored);
            }
        }
        Ok(running)
    }

    /// Whether any call is still without its outcome in the store (the calls-in-flight index):
    /// a stopped task's start in doubt waits for its outcome, or to be settled, after its task
    /// ended.
    async fn calls_unsettled(&self) -> Result<bool, String> {
        let calls = (self.engine.store.stale_calls(Timestamp(i64::MAX)).await)
            .map_err(|error| format!("read the calls in flight: {error}"))?;
        Ok(!calls.is_empty())
    }

    /// How many writes the database has applied.
    pub fn wire_writes(&self) -> u64 {
        self.wire.writes()
    }

    /// Every call outcome the store committed, in the order committed.
    pub fn recorded(&self) -> Vec<crate::wire::Recorded> {
        self.wire.recorded()
    }

    /// When the store last claimed `attempt`, if it did.
    pub fn last_claim(&self, attempt: &crate::provider::AttemptKey) -> Option<i64> {
        self.wire.last_claim(attempt)
    }

    /// The tenant of `task`, as the store names it.
    pub fn tenant_of(&self, task: &SimTask) -> Result<outbound_model::Tenant, String> {
        outbound_model::Tenant::parse(&self.tenants[task.tenant].name)
            .map_err(|error| format!("a tenant name: {error}"))
    }

    pub async fn stored_task(&self, task: &SimTask) -> Result<outbound_model::Task, String> {
        let tenant = self.tenant_of(task)?;
        let id = outbound_model::Id::parse(&task.id).ok_or("a task id")?;
        self.engine
            .store
            .task(&tenant, &id)
            .await
            .map_err(|error| format!("read task {}: {error}", task.id))
    }
}

/// The SDK configuration every client of the world is built from: the wire as its HTTP client,
/// virtual time for its sleeps and its clock, fixed credentials.
fn sdk_config(wire: &Wire, seeded: &Seeded) -> aws_config::SdkConfig {
    use aws_sdk_dynamodb::config::{Credentials, Region, SharedCredentialsProvider};
    aws_config::SdkConfig::builder()
        .behavior_version(aws_config::BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url("http://wire.sim")
        .credentials_provider(SharedCredentialsProvider::new(Credentials::new(
            "sim", "sim", None, None, "sim",
        )))
        .http_client(wire.clone())
        .time_source(aws_smithy_async::time::SharedTimeSource::new(VirtualTime(
            seeded.clone(),
        )))
        // Backoff without jitter: the SDK draws its jitter from the thread's generator, which
        // its log spans draw from too once a log is on, so a replay with SIM_LOG would differ.
        .retry_config(
            aws_config::retry::RetryConfig::standard().with_use_static_exponential_base(true),
        )
        .sleep_impl(aws_smithy_async::rt::sleep::SharedAsyncSleep::new(
            aws_smithy_async::rt::sleep::TokioSleep::new(),
        ))
        .build()
}
