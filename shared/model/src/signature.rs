//! The service's own attributes, signed (D29): every call carries, beside the four attributes
//! that name its attempt ([`OWN_ATTRIBUTES`]), an HMAC-SHA256 of them under a deployment secret
//! (`CALL_SIGNING_KEY`) in [`SIGNATURE_ATTRIBUTE`]. A contact flow can change a contact's
//! attributes, and any principal of the account allowed to invoke the flow-results function can
//! send it any event: what the call carries names an attempt only when its signature verifies.

use crate::call::CallAttempt;
use crate::telephony::OWN_ATTRIBUTES;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The call attribute holding the signature of the other four.
pub const SIGNATURE_ATTRIBUTE: &str = "signature";

/// Bytes of the MAC a signature keeps (128 bits, 32 hexadecimal digits).
const SIGNATURE_BYTES: usize = 16;

/// What a call carries of its attempt: the attempt its own attributes name and the signature
/// beside them (`None` when it has none).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carried {
    pub attempt: CallAttempt,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Carried {
    /// What attributes read by `get` carry; `None` when they name no attempt (not a call of
    /// this service).
    pub fn read(get: impl Fn(&str) -> Option<String>) -> Option<Carried> {
        let signature = get(SIGNATURE_ATTRIBUTE);
        Some(Carried {
            attempt: CallAttempt::from_attributes(get)?,
            signature,
        })
    }
}

/// Signs and checks the attributes of calls; cheap to clone.
#[derive(Clone)]
pub struct CallSigner {
    key: Vec<u8>,
}

impl std::fmt::Debug for CallSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallSigner(..)")
    }
}

impl CallSigner {
    pub fn new(key: &[u8]) -> Self {
        CallSigner { key: key.to_vec() }
    }

    fn mac(&self, attempt: &CallAttempt) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        // Each value after its name, one per line: no id or tenant holds a newline.
        for ((name, value), own) in attempt.attributes().iter().zip(OWN_ATTRIBUTES) {
            debug_assert_eq!(name, own);
            mac.update(name.as_bytes());
            mac.update(b"=");
            mac.update(value.as_bytes());
            mac.update(b"\n");
        }
        mac
    }

    /// The signature of `attempt`'s own attributes.
    pub fn sign(&self, attempt: &CallAttempt) -> String {
        let tag = self.mac(attempt).finalize().into_bytes();
        tag[..SIGNATURE_BYTES]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// The attribute a call carries its signature in, beside its own four.
    pub fn attribute(&self, attempt: &CallAttempt) -> (String, String) {
        (SIGNATURE_ATTRIBUTE.to_owned(), self.sign(attempt))
    }

    /// Whether `carried`'s signature is its attempt's, compared in constant time.
    pub fn verifies(&self, carried: &Carried) -> bool {
        let Some(bytes) = carried.signature.as_deref().and_then(decode_hex) else {
            return false;
        };
        bytes.len() == SIGNATURE_BYTES
            && self
                .mac(&carried.attempt)
                .verify_truncated_left(&bytes)
                .is_ok()
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Id, Tenant};

    fn attempt(number: u32) -> CallAttempt {
        CallAttempt {
            tenant: Tenant::parse("acme").unwrap(),
            task_id: Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G7").unwrap(),
            contact_id: Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G8").unwrap(),
            attempt: number,
        }
    }

    #[test]
    fn only_the_signature_of_the_same_attempt_under_the_same_key_verifies() {
        let signer = CallSigner::new(b"a deployment secret of 32 bytes!");
        let signature = signer.sign(&attempt(1));
        assert_eq!(signature.len(), 32);
        let carried = |number, signature: Option<&str>| Carried {
            attempt: attempt(number),
            signature: signature.map(str::to_owned),
        };
        assert!(signer.verifies(&carried(1, Some(&signature))));
        assert!(
            !signer.verifies(&carried(2, Some(&signature))),
            "another attempt"
        );
        assert!(!signer.verifies(&carried(1, None)), "unsigned");
        assert!(!signer.verifies(&carried(1, Some("zz"))), "not hex");
        assert!(!signer.verifies(&carried(1, Some(&signature[..30]))), "cut");
        let other = CallSigner::new(b"another secret of thirty-two by!");
        assert!(
            !other.verifies(&carried(1, Some(&signature))),
            "another key"
        );
    }

    #[test]
    fn what_a_call_carries_is_read_from_its_attributes() {
        let signer = CallSigner::new(b"k");
        let mut attributes: std::collections::HashMap<String, String> =
            attempt(3).attributes().into_iter().collect();
        attributes.insert(signer.attribute(&attempt(3)).0, signer.sign(&attempt(3)));
        let carried = Carried::read(|name| attributes.get(name).cloned()).unwrap();
        assert_eq!(carried.attempt, attempt(3));
        assert!(signer.verifies(&carried));
        attributes.remove("taskId");
        assert_eq!(Carried::read(|name| attributes.get(name).cloned()), None);
    }
}
