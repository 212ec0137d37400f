//! Paging (D5): validated page requests, the offset cap, `nextToken` cursors and the page.
//!
//! A list page starts either at an offset (`pageNum`, `pageSize`; at most the first
//! [`MAX_OFFSET_END`] rows) or right after the row a `nextToken` names, however deep. A token is
//! `base64url(version | last row id | tag)`, where the tag is HMAC-SHA256, keyed by
//! `PAGE_TOKEN_SECRET`, over the version, the id and the list's [`ListScope`] (tenant, list and
//! filters). The scope itself is not in the token: a token only verifies for the request it was
//! made for, so a tampered, malformed or foreign one (another tenant, list or filter) is refused
//! before anything is read.

use crate::error::Error;
use crate::Id;
use crate::Tenant;
use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;

/// Offset paging reaches the first 10,000 rows: `pageNum * pageSize` may be at most this (D5).
pub const MAX_OFFSET_END: usize = 10_000;

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

    /// This offset page, or 400 when it ends past the first [`MAX_OFFSET_END`] rows (D5).
    pub fn within_cap(self) -> Result<PageQuery, Error> {
        if self.end() > MAX_OFFSET_END {
            return Err(Error::invalid(format!(
                "pageNum * pageSize may be at most {MAX_OFFSET_END}; page further with nextToken"
            )));
        }
        Ok(PageQuery {
            size: self.size as usize,
            start: Start::Offset(self.offset()),
        })
    }
}

/// Where a page starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// After this many rows of the list (at most [`MAX_OFFSET_END`] minus the page).
    Offset(usize),
    /// Right after the row with this id (a verified `nextToken`).
    After(Id),
}

/// A page to read: its size and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageQuery {
    pub size: usize,
    pub start: Start,
}

impl PageQuery {
    /// The first page of `size` rows.
    pub fn first(size: usize) -> Self {
        PageQuery {
            size,
            start: Start::Offset(0),
        }
    }

    /// This page out of `ids`, rows of the list in list order (newest first, so ids descend)
    /// that include at least every row of the page and the one after it; and whether a row
    /// follows the page.
    pub fn pick(&self, ids: Vec<Id>) -> (Vec<Id>, bool) {
        let before = match &self.start {
            Start::Offset(offset) => *offset,
            Start::After(last) => ids.iter().take_while(|id| *id >= last).count(),
        };
        let mut rest = ids.into_iter().skip(before);
        let page: Vec<Id> = rest.by_ref().take(self.size).collect();
        let more = rest.next().is_some();
        (page, more)
    }
}

/// One page of a list, the number of all matches, and the id of its last row when more rows
/// follow (the position a `nextToken` carries).
#[derive(Debug)]
pub struct Page<T> {
    pub total: u64,
    pub rows: Vec<T>,
    pub next: Option<Id>,
}

impl<T> Page<T> {
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            total: self.total,
            rows: self.rows.into_iter().map(f).collect(),
            next: self.next,
        }
    }

    pub fn try_map<U, E>(self, f: impl FnMut(T) -> Result<U, E>) -> Result<Page<U>, E> {
        Ok(Page {
            total: self.total,
            rows: self.rows.into_iter().map(f).collect::<Result<_, _>>()?,
            next: self.next,
        })
    }
}

impl<T: Serialize> Page<T> {
    /// The answer of a list (D5): `total`, `rows`, and `nextToken`, null on the last page.
    pub fn answer(self, tokens: &PageTokens, scope: &ListScope) -> PageView<T> {
        PageView {
            next_token: self.next.as_ref().map(|last| tokens.seal(scope, last)),
            total: self.total,
            rows: self.rows,
        }
    }
}

/// One page of a list (D5).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PageView<T> {
    /// Every row matching the filters, not only this page's.
    pub total: u64,
    pub rows: Vec<T>,
    /// Sent back as `nextToken`, the page after this one; null on the last page. Bound to the
    /// tenant, the list and its filters.
    pub next_token: Option<String>,
}

/// What a `nextToken` is bound to: the tenant, the list and its filters, as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListScope(Vec<u8>);

impl ListScope {
    /// The list `list` (e.g. `task/list`, `dataSource/{id}/contacts`) of `tenant`.
    pub fn new(tenant: &Tenant, list: &str) -> Self {
        ListScope(Vec::new())
            .part(tenant.as_str().as_bytes())
            .part(list.as_bytes())
    }

    /// A filter of the list, `None` when it is not given (distinct from every value).
    pub fn filter(self, name: &str, value: Option<&str>) -> Self {
        let scope = self.part(name.as_bytes());
        match value {
            None => scope.part(&[0]),
            Some(value) => scope.part(&[1]).part(value.as_bytes()),
        }
    }

    /// Each part is length-prefixed, so no two different scopes encode alike.
    fn part(mut self, bytes: &[u8]) -> Self {
        self.0
            .extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        self.0.extend_from_slice(bytes);
        self
    }
}

/// Seals and opens `nextToken`s with the key of `PAGE_TOKEN_SECRET`.
#[derive(Clone)]
pub struct PageTokens {
    key: Vec<u8>,
}

impl std::fmt::Debug for PageTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageTokens").finish_non_exhaustive()
    }
}

const TOKEN_VERSION: u8 = 1;
const TAG_LEN: usize = 16;
const TOKEN_LEN: usize = 1 + 16 + TAG_LEN;

fn invalid_token() -> Error {
    Error::invalid("nextToken is not valid for this request")
}

impl PageTokens {
    pub fn new(secret: &[u8]) -> Self {
        PageTokens {
            key: secret.to_vec(),
        }
    }

    fn mac(&self, scope: &ListScope, body: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(b"outbound nextToken\0");
        mac.update(body);
        mac.update(&scope.0);
        mac
    }

    /// The token of the position right after row `last` of the list `scope`.
    pub fn seal(&self, scope: &ListScope, last: &Id) -> String {
        use base64::Engine;
        let ulid = ulid::Ulid::from_string(last.as_str()).expect("ids are ULIDs");
        let mut bytes = Vec::with_capacity(TOKEN_LEN);
        bytes.push(TOKEN_VERSION);
        bytes.extend_from_slice(&ulid.0.to_be_bytes());
        let tag = self.mac(scope, &bytes).finalize().into_bytes();
        bytes.extend_from_slice(&tag[..TAG_LEN]);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The row a token of the list `scope` continues after; 400 for anything else.
    pub fn open(&self, scope: &ListScope, token: &str) -> Result<Id, Error> {
        use base64::Engine;
        if token.len() > 64 {
            return Err(invalid_token());
        }
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| invalid_token())?;
        if bytes.len() != TOKEN_LEN || bytes[0] != TOKEN_VERSION {
            return Err(invalid_token());
        }
        let (body, tag) = bytes.split_at(1 + 16);
        self.mac(scope, body)
            .verify_truncated_left(tag)
            .map_err(|_| invalid_token())?;
        let ulid = u128::from_be_bytes(body[1..].try_into().map_err(|_| invalid_token())?);
        Id::parse(&ulid::Ulid(ulid).to_string()).ok_or_else(invalid_token)
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
    fn offsets_reach_ten_thousand_rows() {
        let page = |num, size| PageRequest { num, size }.within_cap();
        assert_eq!(
            page(100, 100).unwrap(),
            PageQuery {
                size: 100,
                start: Start::Offset(9_900)
            }
        );
        assert!(page(500, 20).is_ok());
        let error = page(501, 20).unwrap_err().to_string();
        assert_eq!(
            error,
            "pageNum * pageSize may be at most 10000; page further with nextToken"
        );
        assert!(page(1_000_000, 100).is_err());
    }

    fn ids(n: usize) -> Vec<Id> {
        let mut ids: Vec<Id> = (0..n).map(|_| Id::new()).collect();
        ids.reverse();
        ids
    }

    #[test]
    fn pick_by_offset_and_after_a_row() {
        let all = ids(7);
        let at = |start| PageQuery { size: 3, start };
        assert_eq!(
            at(Start::Offset(3)).pick(all.clone()),
            (all[3..6].to_vec(), true)
        );
        assert_eq!(
            at(Start::Offset(4)).pick(all.clone()),
            (all[4..7].to_vec(), false)
        );
        assert_eq!(at(Start::Offset(9)).pick(all.clone()), (vec![], false));
        assert_eq!(
            at(Start::After(all[1].clone())).pick(all.clone()),
            (all[2..5].to_vec(), true)
        );
        // The row a token names may be gone: the page starts at the next older one.
        let mut without = all.clone();
        without.remove(1);
        assert_eq!(
            at(Start::After(all[1].clone())).pick(without),
            (all[2..5].to_vec(), true)
        );
        assert_eq!(
            at(Start::After(all[3].clone())).pick(all.clone()),
            (all[4..7].to_vec(), false)
        );
    }

    fn scope(tenant: &str, name: Option<&str>) -> ListScope {
        ListScope::new(&Tenant::parse(tenant).unwrap(), "task/list").filter("taskName", name)
    }

    #[test]
    fn tokens_open_only_for_their_own_list() {
        let tokens = PageTokens::new(b"a secret of at least thirty-two bytes");
        let last = Id::new();
        let token = tokens.seal(&scope("acme", Some("spring")), &last);
        assert!(token.len() <= 64, "{token}");
        assert_eq!(
            tokens.open(&scope("acme", Some("spring")), &token).unwrap(),
            last
        );
        for other in [
            scope("globex", Some("spring")),
            scope("acme", None),
            scope("acme", Some("")),
            scope("acme", Some("Spring")),
            ListScope::new(&Tenant::parse("acme").unwrap(), "dataSource/list")
                .filter("taskName", Some("spring")),
        ] {
            assert!(tokens.open(&other, &token).is_err());
        }
        let other_key = PageTokens::new(b"another secret of thirty-two bytes!");
        assert!(other_key
            .open(&scope("acme", Some("spring")), &token)
            .is_err());
    }

    #[test]
    fn tampered_and_malformed_tokens_are_refused() {
        let tokens = PageTokens::new(b"a secret of at least thirty-two bytes");
        let scope = scope("acme", None);
        let token = tokens.seal(&scope, &Id::new());
        for i in 0..token.len() {
            let mut chars: Vec<char> = token.chars().collect();
            chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
            let tampered: String = chars.into_iter().collect();
            let error = tokens.open(&scope, &tampered).unwrap_err();
            assert_eq!(error.to_string(), "nextToken is not valid for this request");
        }
        for bad in [
            "",
            "x",
            "!!!!",
            &token[..token.len() - 1],
            &format!("{token}A"),
            &"A".repeat(500),
        ] {
            assert!(tokens.open(&scope, bad).is_err(), "{bad}");
        }
    }
}
