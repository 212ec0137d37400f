//! The proof that a request came through the stack's CloudFront distribution (D32): the
//! distribution adds [`ORIGIN_HEADER`] with a secret value to every request it passes to the
//! API, and the API functions refuse a request without it. The API's own domain answers anyone
//! who learns its name (an HTTP API takes no web ACL and no resource policy); this header is what
//! keeps such a request from going past the web ACL's limits.

use sha2::{Digest, Sha256};

/// The header the distribution adds to every request it passes to the API.
pub const ORIGIN_HEADER: &str = "x-origin-verify";

/// The secret value of [`ORIGIN_HEADER`] (`ORIGIN_VERIFY_SECRET`); its `Debug` never shows it.
#[derive(Clone)]
pub struct OriginSecret {
    digest: [u8; 32],
}

impl std::fmt::Debug for OriginSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OriginSecret(..)")
    }
}

impl OriginSecret {
    pub fn new(value: &str) -> Self {
        OriginSecret {
            digest: Sha256::digest(value.as_bytes()).into(),
        }
    }

    /// Whether `presented`, the request's header, is the secret. Digests are compared, so the
    /// time a comparison takes says nothing of the secret's bytes.
    pub fn admits(&self, presented: Option<&[u8]>) -> bool {
        presented.is_some_and(|presented| {
            let digest: [u8; 32] = Sha256::digest(presented).into();
            digest == self.digest
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_secret_itself_is_admitted() {
        let secret = OriginSecret::new("0123456789abcdef0123456789abcdef");
        assert!(secret.admits(Some(b"0123456789abcdef0123456789abcdef")));
        assert!(!secret.admits(Some(b"0123456789abcdef0123456789abcde")));
        assert!(!secret.admits(Some(b"")));
        assert!(!secret.admits(None));
        assert_eq!(format!("{secret:?}"), "OriginSecret(..)");
    }
}
