//! Paging (D5): validated page requests and the `{total, rows}` page.

use crate::error::Error;
use serde::Serialize;

/// A validated page request: `pageNum` >= 1, `pageSize` 1-100.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRequest {
    pub num: u32,
    pub size: u32,
}

impl PageRequest {
    pub const MAX_SIZE: u32 = 100;

    /// Parses the raw query values; absent means the default (1, 20).
    pub fn parse(num: Option<&str>, size: Option<&str>) -> Result<Self, Error> {
        let num = match num {
            None => 1,
            Some(raw) => raw
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= 1 && *n <= 1_000_000)
                .ok_or_else(|| Error::invalid("pageNum must be an integer >= 1"))?,
        };
        let size = match size {
            None => 20,
            Some(raw) => raw
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=Self::MAX_SIZE).contains(n))
                .ok_or_else(|| Error::invalid("pageSize must be an integer from 1 to 100"))?,
        };
        Ok(PageRequest { num, size })
    }

    /// Items before this page.
    pub fn offset(self) -> usize {
        (self.num as usize - 1) * self.size as usize
    }

    /// Items up to and including this page.
    pub fn end(self) -> usize {
        self.offset() + self.size as usize
    }

    /// This page cut out of every match, newest first.
    pub fn slice<T>(self, all: Vec<T>) -> Page<T> {
        let total = all.len() as u64;
        let rows = all
            .into_iter()
            .skip(self.offset())
            .take(self.size as usize)
            .collect();
        Page { total, rows }
    }
}

/// One page of a list and the number of all matches.
#[derive(Debug, Serialize)]
pub struct Page<T> {
    pub total: u64,
    pub rows: Vec<T>,
}

impl<T> Page<T> {
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            total: self.total,
            rows: self.rows.into_iter().map(f).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bounds() {
        assert_eq!(
            PageRequest::parse(None, None).unwrap(),
            PageRequest { num: 1, size: 20 }
        );
        assert!(PageRequest::parse(Some("1"), Some("100")).is_ok());
        for (num, size) in [
            ("0", "1"),
            ("1", "0"),
            ("1", "101"),
            ("a", "1"),
            ("1", "2.5"),
            ("-1", "1"),
            ("1", ""),
        ] {
            assert!(
                PageRequest::parse(Some(num), Some(size)).is_err(),
                "{num} {size}"
            );
        }
    }

    #[test]
    fn slice_counts_every_match() {
        let page = PageRequest { num: 2, size: 3 }.slice((0..7).collect::<Vec<_>>());
        assert_eq!(page.total, 7);
        assert_eq!(page.rows, vec![3, 4, 5]);
    }
}
