//! The queues, with SQS's semantics as the functions meet them: a message is delivered at least
//! once, after its delay, in an order the seed picks among those visible; one received is
//! hidden for the visibility timeout and comes back then unless it was deleted; while faults
//! are on, one handled may be delivered again.

use crate::Seeded;
use std::collections::BTreeMap;

/// SQS's visibility timeout of the dialing queues, in milliseconds.
pub const VISIBILITY_MILLIS: i64 = 30_000;

/// One message in a queue.
#[derive(Clone, Debug)]
pub struct Message {
    pub id: u64,
    pub body: String,
    /// Virtual milliseconds from when it may be received.
    pub visible_at: i64,
    /// How many times it was received.
    pub receives: u32,
}

/// Every queue, by URL.
#[derive(Debug, Default)]
pub struct Mailbox {
    queues: BTreeMap<String, Vec<Message>>,
    next_id: u64,
}

impl Mailbox {
    /// Queues `body` on `url`, visible after `delay_seconds` (and, for reordering, up to a
    /// second more drawn from the seed).
    pub fn send(&mut self, url: &str, body: &str, delay_seconds: u64, seeded: &Seeded) -> u64 {
        self.next_id += 1;
        let jitter = seeded.below(1_000) as i64;
        let visible_at = seeded.now_ms() + delay_seconds as i64 * 1000 + jitter;
        self.queues
            .entry(url.to_owned())
            .or_default()
            .push(Message {
                id: self.next_id,
                body: body.to_owned(),
                visible_at,
                receives: 0,
            });
        self.next_id
    }

    /// One message of `url` visible now, picked by the seed, hidden for the visibility timeout.
    pub fn receive(&mut self, url: &str, seeded: &Seeded) -> Option<Message> {
        let now = seeded.now_ms();
        let queue = self.queues.get_mut(url)?;
        let visible: Vec<usize> = (0..queue.len())
            .filter(|index| queue[*index].visible_at <= now)
            .collect();
        if visible.is_empty() {
            return None;
        }
        let index = visible[seeded.below(visible.len() as u64) as usize];
        let message = &mut queue[index];
        message.receives += 1;
        message.visible_at = now + VISIBILITY_MILLIS;
        Some(message.clone())
    }

    /// Deletes message `id` of `url`: handled.
    pub fn delete(&mut self, url: &str, id: u64) {
        if let Some(queue) = self.queues.get_mut(url) {
            queue.retain(|message| message.id != id);
        }
    }

    /// Makes message `id` of `url` visible again at once, as a handled message SQS delivers a
    /// second time.
    pub fn again(&mut self, url: &str, id: u64, seeded: &Seeded) {
        let now = seeded.now_ms();
        if let Some(message) = self
            .queues
            .get_mut(url)
            .and_then(|queue| queue.iter_mut().find(|message| message.id == id))
        {
            message.visible_at = now;
        }
    }

    /// The messages waiting in `url`, visible or not.
    pub fn waiting(&self, url: &str) -> usize {
        self.queues.get(url).map_or(0, Vec::len)
    }

    /// When the next message of any queue becomes visible, if any waits.
    pub fn next_visible(&self) -> Option<i64> {
        self.queues
            .values()
            .flatten()
            .map(|message| message.visible_at)
            .min()
    }
}
