//! Seeded simulated days of the dialing engine under a hostile provider and dying runs (D28).
//!
//! Each seed builds a small world on a fresh table: two tenants, three tasks over their data
//! sources, with windows, calling hours, do-not-call entries, a frequency cap shared by two
//! tasks, retry rules, results, and contacts whose scripts mix reasons with the provider's
//! faults (`START_FAILED`, `THROTTLED`, `START_LOST+R`, `EVENT_LATE+R`, `EVENT_TWICE+R`); the
//! simulated provider draws more faults from `SIMULATED_FAULTS` rates under the seed. A storm
//! follows: DynamoDB faults through the fault proxy, dial runs and outcome handlers killed at a
//! random await point, SQS messages redelivered, duplicated and reordered, tasks paused and
//! resumed, the clock moved across window edges. Then the faults stop, and the world runs until
//! every task completes. The invariants are read from the store and from the provider's own log
//! of the calls it placed, never from the engine's memory.
//!
//! `make test` runs [`SEEDS`] seeds; `make sim SEEDS=N` runs N, and `SIM_SEED=n` replays one: a
//! failing seed prints itself and that command.

use crate::dialing_support::{fast_settings, ManualClock, DEFAULT_MIX};
use crate::hostile_provider::killable;
use crate::support::{with_fields, TestApi};
use chrono::{TimeZone, Timelike};
use chrono_tz::Tz;
use outbound_adapters::store::keys;
use outbound_adapters::telephony::settings::FaultRates;
use outbound_adapters::telephony::CallRequest;
use outbound_adapters::telephony::Telephony;
use outbound_dialing::engine::Engine;
use outbound_local::inbox::DialInbox;
use outbound_model::call::{CallReport, Reason};
use outbound_model::plan::Clock;
use outbound_model::{TaskStatus, Timestamp};
use outbound_tests::faults::{FaultPlan, FaultProxy};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Seeds `make test` runs.
const SEEDS: u64 = 6;
/// Rounds of the storm, and at most of the calm after it.
const STORM_ROUNDS: usize = 16;
const CALM_ROUNDS: usize = 90;

/// A small, seeded random source (SplitMix64): the same seed, the same world and storm.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// One call the provider placed, as its own log has it.
#[derive(Clone, Debug)]
struct Placed {
    at: Timestamp,
    request: CallRequest,
    reason: Reason,
}

/// One task of the world and what the checks need of it.
struct SimTask {
    tenant: &'static str,
    id: String,
    source: String,
    max_dial: u32,
    /// Recalls that took effect: each grants `max_dial` more attempts (D12).
    recalls: u32,
    /// The task's own window, read in UTC (its `timeZone`), minutes of the day, both included.
    window: Option<(u32, u32)>,
    paused: bool,
    /// Stopped for good during the storm: it need not complete.
    stopped: bool,
    /// Its contacts, by id; those deleted from the data source during the storm are removed.
    contacts: Vec<String>,
}

/// One tenant: its calling hours (minutes, end excluded), its cap and its listed numbers.
struct SimTenant {
    name: &'static str,
    calling_hours: Option<(u32, u32)>,
    cap: Option<(usize, i64)>,
    listed: HashSet<String>,
}

struct World {
    seed: u64,
    rng: Rng,
    api: TestApi,
    proxy: FaultProxy,
    clock: Arc<ManualClock>,
    engine: Engine<Telephony>,
    placed: Arc<Mutex<Vec<Placed>>>,
    tenants: Vec<SimTenant>,
    tasks: Vec<SimTask>,
    /// Each contact's number and zone, by contact id.
    contacts: HashMap<String, (String, Tz)>,
    /// Messages killed or failed and delivered again, and runs killed.
    redelivered: usize,
    killed: usize,
}

/// Prints the seed and how to replay it when the seed's run fails.
struct Replay(u64);

impl Drop for Replay {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "\nsimulation seed {seed} failed; replay it with:\n  make sim-http SIM_SEED={seed}\n  \
                 (or SIM_SEED={seed} cargo test -p outbound-local --test api simulation -- --nocapture)\n",
                seed = self.0
            );
        }
    }
}

fn seeds(part: u64, parts: u64) -> Vec<u64> {
    outbound_sim::seeds_of_part(part, parts, SEEDS)
}

/// The seeds are split over this many tests, so that the test runner runs them side by side.
const PARTS: u64 = 6;

/// One test per part of the seeds: `seeded_days_under_faults_keep_every_promise_part_<k>` runs
/// the seeds `s` with `s % PARTS == k` (under `SIM_SEED`, part 0 runs that one seed).
macro_rules! parts {
    ($($name:ident = $part:literal),+ $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            for seed in seeds($part, PARTS) {
                simulate(seed).await;
            }
        }
    )+};
}

parts!(
    seeded_days_under_faults_keep_every_promise_part_0 = 0,
    seeded_days_under_faults_keep_every_promise_part_1 = 1,
    seeded_days_under_faults_keep_every_promise_part_2 = 2,
    seeded_days_under_faults_keep_every_promise_part_3 = 3,
    seeded_days_under_faults_keep_every_promise_part_4 = 4,
    seeded_days_under_faults_keep_every_promise_part_5 = 5,
);

async fn simulate(seed: u64) {
    let _replay = Replay(seed);
    let mut world = World::build(seed).await;
    world.storm().await;
    world.calm().await;
    world.check().await;
    eprintln!(
        "simulation seed {seed}: {} calls placed, {} messages delivered again, {} runs killed",
        world.placed.lock().unwrap().len(),
        world.redelivered,
        world.killed
    );
}

/// Script entries a contact's `simulatedOutcomes` draws from.
const ENTRIES: [&str; 14] = [
    "ANSWERED",
    "NO_ANSWER",
    "BUSY",
    "VOICEMAIL",
    "START_FAILED",
    "THROTTLED",
    "START_LOST+ANSWERED",
    "START_LOST+BUSY",
    "EVENT_LATE+ANSWERED",
    "EVENT_LATE+NO_ANSWER",
    "EVENT_TWICE+ANSWERED",
    "EVENT_TWICE+NO_ANSWER",
    "START_FAILED",
    "START_LOST+NO_ANSWER",
];

fn minutes(raw: &str) -> u32 {
    let (h, m) = raw.split_once(':').unwrap();
    h.parse::<u32>().unwrap() * 60 + m.parse::<u32>().unwrap()
}

impl World {
    async fn build(seed: u64) -> World {
        let (api, proxy) = TestApi::start_with_faults().await;
        let clock = ManualClock::starting_now();
        clock.advance_to_utc(16, 0, 0);
        let mut settings = fast_settings(&api, DEFAULT_MIX);
        settings.rate_per_second = 20;
        settings.max_in_flight = 5;
        settings.max_in_flight_per_task = 3;
        settings.reconcile_after = Duration::from_secs(60);
        settings.max_call = Duration::from_secs(2 * 3600);
        settings.simulated.faults = FaultRates {
            start_failed: 600,
            start_lost: 600,
            event_late: 600,
            event_twice: 600,
            throttled: 800,
        };
        settings.simulated.seed = seed;
        settings.simulated.late_by = Duration::from_secs(75);
        let placed = Arc::new(Mutex::new(Vec::new()));
        let log = placed.clone();
        let at = clock.clone();
        let engine = outbound_tests::stack::simulated_engine(
            &api.sdk,
            &api.resources,
            api.store.clone(),
            settings,
            clock.clone(),
        )
        .with_provider(|provider| {
            provider.on_placed(Arc::new(move |call: &CallRequest, report: &CallReport| {
                log.lock().unwrap().push(Placed {
                    at: at.now(),
                    request: call.clone(),
                    reason: report.reason,
                });
            }))
        });
        let mut world = World {
            seed,
            rng: Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xD28),
            api,
            proxy,
            clock,
            engine,
            placed,
            tenants: Vec::new(),
            tasks: Vec::new(),
            contacts: HashMap::new(),
            redelivered: 0,
            killed: 0,
        };
        world.populate().await;
        world
    }

    /// The tenants, their settings and lists, their data sources and published tasks.
    async fn populate(&mut self) {
        let zones_a = [
            chrono_tz::America::New_York,
            chrono_tz::America::Los_Angeles,
            chrono_tz::Europe::London,
        ];
        let zones_b = [
            chrono_tz::America::New_York,
            chrono_tz::Asia::Tokyo,
            chrono_tz::Europe::London,
        ];
        // acme: calling hours and a frequency cap its two tasks share (the same numbers).
        self.api
            .post(
                "acme",
                "/api/settings/update",
                json!({"callingHours": {"start": "08:00", "end": "21:00"},
                       "frequencyCap": {"maxCalls": 2, "periodHours": 1}}),
            )
            .await
            .ok();
        let numbers_a: Vec<(String, Tz)> = (0..6)
            .map(|n| {
                (
                    format!("+1212555{:04}", 100 + n * 7 + self.seed % 5),
                    *self.rng.pick(&zones_a),
                )
            })
            .collect();
        let numbers_b: Vec<(String, Tz)> = (0..6)
            .map(|n| {
                (
                    format!("+1312555{:04}", 200 + n * 11 + self.seed % 7),
                    *self.rng.pick(&zones_b),
                )
            })
            .collect();
        let mut tenants = Vec::new();
        for (name, numbers, hours, cap) in [
            (
                "acme",
                &numbers_a,
                Some((8 * 60, 21 * 60)),
                Some((2, 3_600_000)),
            ),
            ("globex", &numbers_b, None, None),
        ] {
            let listed = numbers[self.rng.below(numbers.len() as u64) as usize]
                .0
                .clone();
            self.api
                .post(name, "/api/dnc/add", json!({"phoneNumber": listed}))
                .await
                .ok();
            tenants.push(SimTenant {
                name,
                calling_hours: hours,
                cap,
                listed: HashSet::from([listed]),
            });
        }
        self.tenants = tenants;
        let windows: [Option<(&str, &str)>; 3] =
            [None, Some(("16:00", "18:30")), Some(("17:00", "23:59"))];
        for (tenant, numbers) in [
            ("acme", &numbers_a),
            ("acme", &numbers_a),
            ("globex", &numbers_b),
        ] {
            let contacts: Vec<(String, Value)> = numbers
                .iter()
                .map(|(number, zone)| {
                    let script: Vec<&str> = (0..self.rng.below(4))
                        .map(|_| *self.rng.pick(&ENTRIES))
                        .collect();
                    let mut fields = json!({"timeZone": zone.name(),
                                            "simulatedResults": "outcome=yes"});
                    if !script.is_empty() {
                        fields["simulatedOutcomes"] = json!(script.join(","));
                    }
                    (number.clone(), fields)
                })
                .collect();
            let borrowed: Vec<(&str, Value)> = contacts
                .iter()
                .map(|(number, fields)| (number.as_str(), fields.clone()))
                .collect();
            let (source, ids) = self.api.source_of(tenant, &borrowed).await;
            for (contact, (number, zone)) in ids.iter().zip(numbers.iter()) {
                self.contacts
                    .insert(contact.clone(), (number.clone(), *zone));
            }
            // Tokyo has no open minute in acme's calling hours during a window of the UTC
            // afternoon: globex's tasks alone may have one.
            let window = if tenant == "globex" || self.rng.chance(50) {
                *self.rng.pick(&windows)
            } else {
                None
            };
            let max_dial = 2 + self.rng.below(2) as u32;
            let mut extra = json!({
                "maxDialCount": max_dial,
                "callInterval": 60,
                "timeZone": "UTC",
                "windowTimeZone": "TASK",
                "priority": 1 + self.rng.below(5),
                "resultAttributes": ["outcome"],
                "retryRules": [{"reason": "BUSY", "delaySeconds": 30}],
            });
            if let Some((start, end)) = window {
                extra = with_fields(
                    extra,
                    &json!({"dailyStartTime": start, "dailyEndTime": end}),
                );
            }
            let task = self
                .api
                .task(tenant, &format!("Sim {}", self.tasks.len()), &source, extra)
                .await;
            let published = self
                .api
                .post(tenant, "/api/task/publish", json!({"id": task}))
                .await;
            assert_eq!(published.ok()["status"], 1, "{:?}", published.body);
            self.tasks.push(SimTask {
                tenant,
                id: task,
                source,
                max_dial,
                recalls: 0,
                window: window.map(|(s, e)| (minutes(s), minutes(e))),
                paused: false,
                stopped: false,
                contacts: ids,
            });
        }
    }

    /// Faults everywhere: DynamoDB, the provider, dying runs, SQS redelivery and reordering.
    async fn storm(&mut self) {
        self.proxy.set_plan(FaultPlan::Rate {
            percent: 4,
            seed: self.seed,
        });
        for _ in 0..STORM_ROUNDS {
            if self.rng.chance(8) {
                // A contact deleted under its running task (D11, D13).
                let at = self.rng.below(self.tasks.len() as u64) as usize;
                let task = &self.tasks[at];
                if !task.contacts.is_empty() {
                    let which = self.rng.below(task.contacts.len() as u64) as usize;
                    let contact = task.contacts[which].clone();
                    let answer = self
                        .api
                        .post(
                            task.tenant,
                            &format!("/api/dataSource/{}/contact/delete", task.source),
                            json!({"contactId": contact}),
                        )
                        .await;
                    if answer.status == 200 {
                        self.tasks[at].contacts.remove(which);
                    }
                }
            }
            if self.rng.chance(4) && self.tasks.iter().all(|t| !t.stopped) {
                // One task stopped for good, calls in flight and all.
                let at = self.rng.below(self.tasks.len() as u64) as usize;
                let task = &self.tasks[at];
                let answer = self
                    .api
                    .post(task.tenant, "/api/task/stop", json!({"id": task.id}))
                    .await;
                if answer.status == 200 {
                    self.tasks[at].stopped = true;
                }
            }
            if self.rng.chance(20) {
                let at = self.rng.below(self.tasks.len() as u64) as usize;
                let task = &self.tasks[at];
                if task.stopped {
                    continue;
                }
                let op = if task.paused { "resume" } else { "pause" };
                let answer = self
                    .api
                    .post(
                        task.tenant,
                        &format!("/api/task/{op}"),
                        json!({"id": task.id}),
                    )
                    .await;
                if answer.status == 200 {
                    self.tasks[at].paused = !self.tasks[at].paused;
                }
            }
            if self.rng.chance(10) {
                // A recall of every failed contact (D12).
                let at = self.rng.below(self.tasks.len() as u64) as usize;
                let task = &self.tasks[at];
                let answer = self
                    .api
                    .post(
                        task.tenant,
                        &format!("/api/task/{}/recall", task.id),
                        json!({}),
                    )
                    .await;
                if answer.status == 200 && answer.body["data"]["recallCount"].as_u64() > Some(0) {
                    self.tasks[at].recalls += 1;
                }
            }
            let polls = 1 + self.rng.below(60) as usize;
            if self.rng.chance(15) {
                self.killed += 1;
                let _ = killable(self.engine.tick(), polls).await;
            } else {
                let _ = self.engine.tick().await;
            }
            self.deliver(true).await;
            let step = if self.rng.chance(12) {
                20 * 60
            } else {
                5 + self.rng.below(40)
            };
            self.clock.advance(Duration::from_secs(step));
        }
    }

    /// The faults stop: every task resumed, rounds until each completes.
    async fn calm(&mut self) {
        self.proxy.set_plan(FaultPlan::None);
        if let Telephony::Simulated(provider) = &self.engine.provider {
            provider.calm();
        }
        for at in 0..self.tasks.len() {
            if self.tasks[at].paused && !self.tasks[at].stopped {
                let task = &self.tasks[at];
                let answer = self
                    .api
                    .post(task.tenant, "/api/task/resume", json!({"id": task.id}))
                    .await;
                assert_eq!(answer.status, 200, "{:?}", answer.body);
                self.tasks[at].paused = false;
            }
        }
        self.newcomer().await;
        for round in 0..CALM_ROUNDS {
            self.engine.tick().await.unwrap();
            let handled = self.deliver(false).await;
            let mut done = true;
            for task in &self.tasks {
                let stored = self.api.stored_task(task.tenant, &task.id).await;
                done &= if task.stopped {
                    stored.in_flight == 0
                } else {
                    stored.status == TaskStatus::Completed
                };
            }
            if done {
                eprintln!(
                    "simulation seed {}: all completed after {round} calm rounds",
                    self.seed
                );
                return;
            }
            // Minutes while calls are going, an hour when nothing moved (windows to open).
            let step = if handled > 0 { 90 } else { 3600 };
            self.clock.advance(Duration::from_secs(step));
        }
        let mut left = Vec::new();
        for task in &self.tasks {
            let stored = self.api.stored_task(task.tenant, &task.id).await;
            let diagnostics = self
                .api
                .get(task.tenant, &format!("/api/task/{}/diagnostics", task.id))
                .await;
            left.push((stored.status, diagnostics.body));
        }
        panic!("seed {}: tasks left after the calm: {left:#?}", self.seed);
    }

    /// A tenant that arrives after the storm, while the others' tasks still run with all their
    /// history (D13, D23, D28): its task places calls within two ticks.
    async fn newcomer(&mut self) {
        let numbers: Vec<(String, Value)> = (0..4)
            .map(|n| {
                (
                    format!("+1415555{:04}", 300 + n),
                    json!({"timeZone": "America/New_York", "simulatedOutcomes": "ANSWERED",
                           "simulatedResults": "outcome=yes"}),
                )
            })
            .collect();
        let borrowed: Vec<(&str, Value)> = numbers
            .iter()
            .map(|(number, fields)| (number.as_str(), fields.clone()))
            .collect();
        let (source, ids) = self.api.source_of("initech", &borrowed).await;
        for (contact, (number, _)) in ids.iter().zip(&numbers) {
            self.contacts.insert(
                contact.clone(),
                (number.clone(), chrono_tz::America::New_York),
            );
        }
        let task = self
            .api
            .task(
                "initech",
                "Newcomer",
                &source,
                json!({"maxDialCount": 1, "priority": 1, "resultAttributes": ["outcome"]}),
            )
            .await;
        let published = self
            .api
            .post("initech", "/api/task/publish", json!({"id": task}))
            .await;
        assert_eq!(published.ok()["status"], 1);
        self.tenants.push(SimTenant {
            name: "initech",
            calling_hours: None,
            cap: None,
            listed: HashSet::new(),
        });
        self.tasks.push(SimTask {
            tenant: "initech",
            id: task.clone(),
            source,
            max_dial: 1,
            recalls: 0,
            window: None,
            paused: false,
            stopped: false,
            contacts: ids,
        });
        for _ in 0..2 {
            self.engine.tick().await.unwrap();
            self.deliver(false).await;
            self.clock.advance(Duration::from_secs(61));
        }
        let placed = self
            .placed
            .lock()
            .unwrap()
            .iter()
            .filter(|call| call.request.task_id.as_str() == task)
            .count();
        if placed == 0 {
            let diagnostics = self
                .api
                .get("initech", &format!("/api/task/{task}/diagnostics"))
                .await;
            panic!(
                "seed {}: a newcomer's task placed no call in two ticks: {}",
                self.seed, diagnostics.body
            );
        }
    }

    /// Hands every message waiting on the dial and call-events queues to the engine, in a
    /// shuffled order; in a storm some twice, some killed at an await point or failed and
    /// delivered again (as SQS does after the visibility timeout). Answers how many it handled.
    async fn deliver(&mut self, storm: bool) -> usize {
        let mut handled = 0;
        for _ in 0..6 {
            let mut messages: Vec<(DialInbox, String)> = Vec::new();
            for (inbox, url) in [
                (DialInbox::Jobs, self.api.resources.dial_queue_url.clone()),
                (
                    DialInbox::CallEvents,
                    self.api.resources.call_events_queue_url.clone(),
                ),
            ] {
                for body in self.api.take_messages(&url).await {
                    messages.push((inbox, body));
                }
            }
            if messages.is_empty() {
                break;
            }
            for at in (1..messages.len()).rev() {
                let other = self.rng.below(at as u64 + 1) as usize;
                messages.swap(at, other);
            }
            // Handled two at a time, so runs of one task overlap.
            let mut again = Vec::new();
            for pair in messages.chunks(2) {
                let mut runs = Vec::new();
                for (inbox, body) in pair {
                    let twice = storm && self.rng.chance(10);
                    let polls = (storm && self.rng.chance(15)).then(|| 1 + self.rng.below(80));
                    runs.push((*inbox, body.clone(), twice, polls));
                }
                let engine = &self.engine;
                let outcomes = futures::future::join_all(runs.iter().map(
                    |(inbox, body, _, polls)| async move {
                        let work = inbox.handle(engine, body.clone());
                        match polls {
                            Some(polls) => killable(work, *polls as usize).await,
                            None => Some(work.await),
                        }
                    },
                ))
                .await;
                for ((inbox, body, twice, _), outcome) in runs.into_iter().zip(outcomes) {
                    handled += 1;
                    match outcome {
                        Some(Ok(())) if twice => again.push((inbox, body)),
                        Some(Ok(())) => {}
                        Some(Err(error)) => {
                            assert!(
                                storm,
                                "seed {}: failed without faults: {error} ({error:?})",
                                self.seed
                            );
                            again.push((inbox, body));
                        }
                        None => {
                            self.killed += 1;
                            again.push((inbox, body));
                        }
                    }
                }
            }
            self.redelivered += again.len();
            for (inbox, body) in again {
                let url = match inbox {
                    DialInbox::Jobs => &self.api.resources.dial_queue_url,
                    DialInbox::CallEvents => &self.api.resources.call_events_queue_url,
                };
                aws_sdk_sqs::Client::new(&self.api.sdk)
                    .send_message()
                    .queue_url(url)
                    .message_body(body)
                    .send()
                    .await
                    .unwrap();
            }
        }
        handled
    }

    /// The invariants, from the store and the provider's log.
    async fn check(&self) {
        let seed = self.seed;
        let placed = self.placed.lock().unwrap().clone();
        // No attempt placed twice (per client token).
        let mut tokens = HashSet::new();
        for call in &placed {
            assert!(
                tokens.insert(call.request.token()),
                "seed {seed}: attempt {} placed twice",
                call.request.token()
            );
        }
        let mut by_number: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
        for call in &placed {
            let task = self
                .tasks
                .iter()
                .find(|t| t.id == call.request.task_id.as_str())
                .expect("a call of a task of the world");
            let tenant = self.tenants.iter().find(|t| t.name == task.tenant).unwrap();
            let (number, zone) = &self.contacts[call.request.contact_id.as_str()];
            // Never more attempts than the allowance; never a listed number.
            let allowance = task.max_dial * (1 + task.recalls);
            assert!(
                call.request.attempt <= allowance,
                "seed {seed}: {call:?} beyond its allowance {allowance}"
            );
            assert!(
                !tenant.listed.contains(number),
                "seed {seed}: listed number called: {call:?}"
            );
            // Never outside the task's window (UTC) or the tenant's calling hours (local).
            let utc = chrono::Utc.timestamp_millis_opt(call.at.0).unwrap();
            if let Some((start, end)) = task.window {
                let minute = utc.hour() * 60 + utc.minute();
                assert!(
                    (start..=end).contains(&minute),
                    "seed {seed}: called at {utc} outside the window: {call:?}"
                );
            }
            if let Some((start, end)) = tenant.calling_hours {
                let local = utc.with_timezone(zone);
                let minute = local.hour() * 60 + local.minute();
                assert!(
                    (start..end).contains(&minute),
                    "seed {seed}: called at {local} outside calling hours: {call:?}"
                );
            }
            by_number
                .entry((task.tenant.to_owned(), number.clone()))
                .or_default()
                .push(call.at.0);
        }
        // Never over the frequency cap, across tasks.
        for ((tenant_name, number), mut times) in by_number {
            let tenant = self.tenants.iter().find(|t| t.name == tenant_name).unwrap();
            let Some((most, period)) = tenant.cap else {
                continue;
            };
            times.sort_unstable();
            for (at, time) in times.iter().enumerate() {
                let within = times[..=at].iter().filter(|t| **t > time - period).count();
                assert!(
                    within <= most,
                    "seed {seed}: {number} called {within} times within the cap's period"
                );
            }
        }
        // Capacity in use is back to zero with nothing in flight.
        let capacity = self
            .api
            .dynamodb()
            .get_item()
            .table_name(self.api.store.table())
            .key(
                keys::PK,
                aws_sdk_dynamodb::types::AttributeValue::S(keys::dialer(0)),
            )
            .key(
                keys::SK,
                aws_sdk_dynamodb::types::AttributeValue::S(keys::CAPACITY.to_owned()),
            )
            .send()
            .await
            .unwrap();
        let service = capacity
            .item()
            .and_then(|item| item.get("in_flight"))
            .and_then(|value| value.as_n().ok())
            .map_or(0, |n| n.parse::<i64>().unwrap());
        assert_eq!(service, 0, "seed {seed}: the service's calls in flight");
        for task in &self.tasks {
            self.check_task(task, &placed).await;
        }
    }

    /// One task's counters, diagnostics, contacts and results against the calls recorded and
    /// the calls placed.
    async fn check_task(&self, task: &SimTask, placed: &[Placed]) {
        let seed = self.seed;
        let now = self.clock.now();
        let stored = self.api.stored_task(task.tenant, &task.id).await;
        let status = if task.stopped {
            TaskStatus::Stopped
        } else {
            TaskStatus::Completed
        };
        assert_eq!(stored.status, status, "seed {seed}");
        assert_eq!(stored.in_flight, 0, "seed {seed}: task {}", task.id);
        assert_eq!(stored.reserved_at(now), 0, "seed {seed}: task {}", task.id);
        let states = self.api.stored_task_contacts(task.tenant, &task.id).await;
        let attempts: u32 = states.values().map(|s| s.attempts).sum();
        let counters = &stored.counters;
        assert_eq!(
            u64::from(attempts),
            counters.calls,
            "seed {seed}: task {}: attempts recorded and the task's count",
            task.id
        );
        assert_eq!(
            counters.calls,
            counters.success + counters.failed + counters.no_answer,
            "seed {seed}"
        );
        for state in states.values() {
            assert!(
                (state.done || task.stopped)
                    && (state.in_call.is_none() || (task.stopped && state.released)),
                "seed {seed}: {state:?}"
            );
            if state.answered {
                assert_eq!(
                    state.results.get("outcome").map(String::as_str),
                    Some("yes"),
                    "seed {seed}: an answered contact keeps what the flow set: {state:?}"
                );
            }
        }
        // Every placed call's outcome recorded once: with the reason the provider ended it with,
        // or, when that outcome came only after `DIAL_MAX_CALL_SECONDS` for an attempt in doubt
        // (D28; the simulation's clock runs far ahead of SQS's delays), as "no outcome"; and the
        // attempts never placed (in doubt until the ceiling) as "no outcome". Never a reason
        // recorded more often than the provider ended calls with it.
        let diagnostics = self
            .api
            .get(task.tenant, &format!("/api/task/{}/diagnostics", task.id))
            .await;
        let reasons = &diagnostics.ok()["reasons"];
        let mine: Vec<&Placed> = placed
            .iter()
            .filter(|call| call.request.task_id.as_str() == task.id)
            .collect();
        let mut recorded = 0;
        let mut with_their_reason = 0;
        for reason in Reason::ALL {
            let counted = reasons[reason.name()].as_u64().unwrap_or(0);
            recorded += counted;
            if reason == Reason::NoOutcome {
                continue;
            }
            with_their_reason += counted;
            let expected = mine.iter().filter(|call| call.reason == reason).count() as u64;
            assert!(
                counted <= expected,
                "seed {seed}: task {}: {} recorded {counted} times, placed {expected}",
                task.id,
                reason.name()
            );
        }
        let placed_count = mine.len() as u64;
        let outcome_too_late = placed_count - with_their_reason;
        assert_eq!(
            reasons[Reason::NoOutcome.name()].as_u64().unwrap_or(0),
            (counters.calls - placed_count) + outcome_too_late,
            "seed {seed}: task {}: \"no outcome\" is the attempts never placed and those whose \
             outcome came past the ceiling",
            task.id
        );
        assert_eq!(recorded, counters.calls, "seed {seed}: reasons and calls");
        // The contacts' call counts and status move with the outcomes.
        let contacts = self.api.all_contacts(task.tenant, &task.source).await;
        for contact in contacts {
            let contact_id = contact["id"].as_str().unwrap();
            let (attempts, outcome) = match states.get(contact_id) {
                Some(state) => (state.attempts, state.last_outcome),
                // Never reached: only a task stopped before it called them.
                None if task.stopped => (0, 0),
                None => panic!("seed {seed}: {contact} was never called"),
            };
            assert_eq!(
                contact["callCount"].as_u64(),
                Some(u64::from(attempts)),
                "seed {seed}: {contact}"
            );
            assert_eq!(
                contact["status"].as_u64(),
                Some(u64::from(outcome)),
                "seed {seed}: {contact}"
            );
        }
        // The results count each answered contact once.
        let results = self
            .api
            .get(task.tenant, &format!("/api/task/{}/results", task.id))
            .await;
        let answered = states.values().filter(|state| state.answered).count() as u64;
        let outcome = &results.ok()["attributes"][0];
        let yes = outcome["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|value| value["value"] == "yes")
            .map_or(0, |value| value["count"].as_u64().unwrap());
        assert_eq!(
            yes,
            answered,
            "seed {seed}: results {results:?}",
            results = results.body
        );
    }
}
