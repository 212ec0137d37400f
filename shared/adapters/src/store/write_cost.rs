//! Write capacity: what a write costs in DynamoDB's write capacity units (WCU), and the pace that
//! keeps a long run of writes to one partition under its limit.
//!
//! Every contact of a data source, and its phone guard, has the data source's partition key, and
//! one partition takes at most 1,000 WCU per second whatever the table's capacity mode. An import
//! writes 49 contacts and 49 guards per transaction, about 200 WCU (a transactional write costs
//! 2 WCU per started KB of the item), so without a pace a 10,000-row import asks for several
//! thousand WCU per second of one partition and is throttled. [`WritePace`] spreads it instead.

use super::Item;
use aws_sdk_dynamodb::types::AttributeValue;
use std::time::{Duration, Instant};

/// What one partition takes per second (DynamoDB's per-partition write limit).
pub const PARTITION_WCU_PER_SECOND: u32 = 1_000;

/// The pace of an import by default: 80 % of one partition, leaving room for the API's and the
/// dialer's writes to the same data source.
pub const DEFAULT_IMPORT_WCU_PER_SECOND: u32 = 800;

/// An item's size as DynamoDB bills it: attribute names plus values.
pub fn item_bytes(item: &Item) -> usize {
    item.iter()
        .map(|(name, value)| name.len() + value_bytes(value))
        .sum()
}

fn value_bytes(value: &AttributeValue) -> usize {
    // A number: about one byte per two significant digits, plus one.
    let number = |text: &str| text.trim_start_matches('-').len().div_ceil(2) + 1;
    match value {
        AttributeValue::S(text) => text.len(),
        AttributeValue::N(text) => number(text),
        AttributeValue::B(bytes) => bytes.as_ref().len(),
        AttributeValue::Ss(texts) => texts.iter().map(String::len).sum(),
        AttributeValue::Ns(texts) => texts.iter().map(|text| number(text)).sum(),
        AttributeValue::Bs(blobs) => blobs.iter().map(|blob| blob.as_ref().len()).sum(),
        AttributeValue::L(values) => 3 + values.iter().map(|v| 1 + value_bytes(v)).sum::<usize>(),
        AttributeValue::M(map) => {
            3 + map
                .iter()
                .map(|(name, v)| 1 + name.len() + value_bytes(v))
                .sum::<usize>()
        }
        _ => 1,
    }
}

/// The WCU of writing an item of `bytes`: 1 per started KB, 2 in a transaction.
pub fn write_units(bytes: usize, transactional: bool) -> u64 {
    let per_kb = if transactional { 2 } else { 1 };
    per_kb * bytes.div_ceil(1024).max(1) as u64
}

/// Spreads a run of writes so it never asks more than `units_per_second` WCU of a second on
/// average: each write waits until the units spent before it are due.
#[derive(Debug)]
pub struct WritePace {
    units_per_second: f64,
    started: Instant,
    spent: f64,
}

impl WritePace {
    pub fn new(units_per_second: u32) -> Self {
        Self::starting(units_per_second, Instant::now())
    }

    /// A pace whose first units are due at `started`.
    pub fn starting(units_per_second: u32, started: Instant) -> Self {
        WritePace {
            units_per_second: f64::from(units_per_second.max(1)),
            started,
            spent: 0.0,
        }
    }

    /// How long to wait before writing `units` more.
    pub fn delay_for(&mut self, units: u64, now: Instant) -> Duration {
        let due = self.started + Duration::from_secs_f64(self.spent / self.units_per_second);
        self.spent += units as f64;
        due.saturating_duration_since(now)
    }

    /// Waits until `units` more may be written.
    pub async fn spend(&mut self, units: u64) {
        let delay = self.delay_for(units, Instant::now());
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
}

/// Paces writes per partition key (DynamoDB's limit is a key's): each key's units are spread
/// at `units_per_second`, and a write touching several keys waits for the busiest of them.
#[derive(Debug)]
pub struct PartitionPace {
    units_per_second: u32,
    keys: std::collections::HashMap<String, WritePace>,
}

impl PartitionPace {
    pub fn new(units_per_second: u32) -> Self {
        PartitionPace {
            units_per_second,
            keys: Default::default(),
        }
    }

    /// How long to wait before writing `units` more to each of their keys.
    pub fn delay_for(&mut self, units: &[(String, u64)], now: Instant) -> Duration {
        let mut delay = Duration::ZERO;
        for (key, units) in units {
            let pace = self
                .keys
                .entry(key.clone())
                .or_insert_with(|| WritePace::starting(self.units_per_second, now));
            delay = delay.max(pace.delay_for(*units, now));
        }
        delay
    }

    /// Waits until `units` more may be written to each of their keys.
    pub async fn spend(&mut self, units: &[(String, u64)]) {
        let delay = self.delay_for(units, Instant::now());
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_units_follow_dynamodb_rules() {
        let item: Item = [
            ("pk".to_owned(), AttributeValue::S("T#acme".into())),
            ("n".to_owned(), AttributeValue::N("12345".into())),
        ]
        .into();
        assert_eq!(item_bytes(&item), 2 + 6 + 1 + 4);
        assert_eq!(write_units(1, false), 1);
        assert_eq!(write_units(1024, true), 2);
        assert_eq!(write_units(1025, true), 4);
    }

    #[test]
    fn each_key_has_its_own_pace_and_a_write_waits_for_its_busiest() {
        let mut pace = PartitionPace::new(100);
        let now = Instant::now();
        let write = |a: u64, b: u64| vec![("a".to_owned(), a), ("b".to_owned(), b)];
        assert_eq!(pace.delay_for(&write(100, 10), now), Duration::ZERO);
        // Key a has spent a second's units, key b a tenth: a's next write waits a second.
        assert_eq!(
            pace.delay_for(&[("b".to_owned(), 10)], now),
            Duration::from_millis(100)
        );
        assert_eq!(pace.delay_for(&write(1, 1), now), Duration::from_secs(1));
    }

    #[test]
    fn the_pace_spreads_units_over_seconds() {
        let mut pace = WritePace::new(800);
        let start = pace.started;
        // The first 200 units go at once; the next wait until those are due (0.25 s).
        assert_eq!(pace.delay_for(200, start), Duration::ZERO);
        assert_eq!(pace.delay_for(200, start), Duration::from_millis(250));
        assert_eq!(pace.delay_for(400, start), Duration::from_millis(500));
        // Time that passed on its own counts.
        assert_eq!(
            pace.delay_for(200, start + Duration::from_secs(2)),
            Duration::ZERO
        );
    }
}
