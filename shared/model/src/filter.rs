//! A task's contact filter (D31): up to ten conditions on a contact's fields (custom or known)
//! or its `phoneNumber`, all of which must hold for the task to dial it. Parsed once from the request
//! (every bad condition named), stored with the task's settings, fixed at publish, and judged by
//! the dial run on each contact as its turn comes.

use crate::contact::{FieldName, PHONE_FIELD};
use crate::error::Error;
use crate::phone::Phone;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most conditions a filter holds.
pub const MAX_CONDITIONS: usize = 10;
/// The most values an `in` condition lists.
pub const MAX_IN_VALUES: usize = 100;
/// The longest value a condition compares with, in characters (a custom field's own bound).
pub const MAX_VALUE_CHARS: usize = crate::contact::MAX_CUSTOM_CHARS;

/// How a condition tests its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum FilterOp {
    /// The field equals `value`.
    Eq,
    /// The field is absent or differs from `value`.
    Ne,
    /// The field equals one of `value`'s strings.
    In,
    /// The field starts with `value`.
    Prefix,
    /// The field is set (no `value`).
    Exists,
}

impl FilterOp {
    const ALL: [FilterOp; 5] = [
        FilterOp::Eq,
        FilterOp::Ne,
        FilterOp::In,
        FilterOp::Prefix,
        FilterOp::Exists,
    ];

    fn name(self) -> &'static str {
        self.into()
    }
}

/// One condition as stored: `values` holds the one value of `eq`, `ne` and `prefix`, the list of
/// `in`, nothing for `exists`. Values of `phoneNumber` are kept without separators, as numbers
/// are stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    pub field: String,
    pub op: FilterOp,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl Condition {
    /// Whether it holds for a contact whose field's value is `value` (`None`: absent).
    fn holds(&self, value: Option<&str>) -> bool {
        match (self.op, value) {
            (FilterOp::Exists, value) => value.is_some_and(|v| !v.is_empty()),
            (FilterOp::Ne, None) => true,
            (_, None) => false,
            (FilterOp::Eq, Some(value)) => self.values.iter().any(|v| v == value),
            (FilterOp::Ne, Some(value)) => self.values.iter().all(|v| v != value),
            (FilterOp::In, Some(value)) => self.values.iter().any(|v| v == value),
            (FilterOp::Prefix, Some(value)) => {
                self.values.iter().any(|v| value.starts_with(v.as_str()))
            }
        }
    }

    /// The condition as the API shows it: `{field, op, value}`.
    pub fn view(&self) -> Value {
        let mut shown = serde_json::json!({ "field": self.field, "op": self.op.name() });
        let value = match self.op {
            FilterOp::Exists => None,
            FilterOp::In => Some(Value::from(self.values.clone())),
            _ => self.values.first().cloned().map(Value::from),
        };
        if let (Some(value), Some(map)) = (value, shown.as_object_mut()) {
            map.insert("value".to_owned(), value);
        }
        shown
    }
}

/// A condition as the API takes and shows it (D31), for the contract.
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct FilterCondition {
    /// `phoneNumber` or a contact field's name.
    field: String,
    op: FilterOp,
    /// A string for `eq`, `ne` and `prefix`; a list of 1-100 strings for `in`; absent for
    /// `exists`.
    #[schema(value_type = Option<serde_json::Value>)]
    value: Option<Value>,
}

/// A task's filter: every condition must hold. Empty: every contact is dialled.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContactFilter(Vec<Condition>);

impl ContactFilter {
    /// The filter as sent: a list of at most ten `{field, op, value}`; `null` or `[]` is no
    /// filter. 400 names the first bad condition (`filter[2].value ...`).
    pub fn parse(sent: &Value) -> Result<Self, Error> {
        let list = match sent {
            Value::Null => return Ok(ContactFilter::default()),
            Value::Array(list) => list,
            _ => return Err(Error::invalid("filter must be a list of conditions")),
        };
        if list.len() > MAX_CONDITIONS {
            return Err(Error::invalid(format!(
                "filter holds at most {MAX_CONDITIONS} conditions"
            )));
        }
        list.iter()
            .enumerate()
            .map(|(at, sent)| condition(&format!("filter[{at}]"), sent))
            .collect::<Result<_, _>>()
            .map(ContactFilter)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn conditions(&self) -> &[Condition] {
        &self.0
    }

    /// The contact fields its conditions read, the phone number aside: what the run loads of
    /// each contact beside the fields its calls send.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .map(|c| c.field.as_str())
            .filter(|field| *field != PHONE_FIELD)
    }

    /// Whether a contact with number `phone` (its stored normal form) and fields read by
    /// `field` passes every condition.
    pub fn matches<'a>(&self, phone: &'a str, field: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|c| {
            let value = match c.field.as_str() {
                PHONE_FIELD => Some(phone),
                name => field(name),
            };
            c.holds(value)
        })
    }

    /// The filter as the API shows it.
    pub fn view(&self) -> Vec<Value> {
        self.0.iter().map(Condition::view).collect()
    }
}

fn condition(at: &str, sent: &Value) -> Result<Condition, Error> {
    let Value::Object(map) = sent else {
        return Err(Error::invalid(format!(
            "{at} must be an object {{\"field\",\"op\",\"value\"}}"
        )));
    };
    if let Some(other) = map
        .keys()
        .find(|key| !["field", "op", "value"].contains(&key.as_str()))
    {
        return Err(Error::invalid(format!(
            "{at}.{other} is not a field of a condition (field, op, value)"
        )));
    }
    let field = match map.get("field") {
        Some(Value::String(name)) if name == PHONE_FIELD || FieldName::parse(name).is_ok() => {
            name.clone()
        }
        _ => {
            return Err(Error::invalid(format!(
                "{at}.field must be phoneNumber or a contact field: customerName, address, \
                 orderAmount, timeZone or a custom field's name (letters, digits and _, starting \
                 with a letter, at most 64)"
            )))
        }
    };
    let ops = FilterOp::ALL.map(FilterOp::name).join(", ");
    let op = match map.get("op") {
        Some(Value::String(name)) => FilterOp::ALL.into_iter().find(|op| op.name() == name),
        _ => None,
    }
    .ok_or_else(|| Error::invalid(format!("{at}.op must be one of {ops}")))?;
    let phone = field == PHONE_FIELD;
    let one = |value: &Value, named: &str| -> Result<String, Error> {
        match value {
            Value::String(text) if text.chars().count() <= MAX_VALUE_CHARS => Ok(if phone {
                Phone::filter_fragment(text)
            } else {
                text.clone()
            }),
            _ => Err(Error::invalid(format!(
                "{named} must be a string of at most {MAX_VALUE_CHARS} characters"
            ))),
        }
    };
    let value = map.get("value");
    let values = match (op, value) {
        (FilterOp::Exists, None | Some(Value::Null)) => Vec::new(),
        (FilterOp::Exists, Some(_)) => {
            return Err(Error::invalid(format!(
                "{at}.value must be absent for exists"
            )))
        }
        (FilterOp::In, Some(Value::Array(list)))
            if !list.is_empty() && list.len() <= MAX_IN_VALUES =>
        {
            list.iter()
                .enumerate()
                .map(|(n, value)| one(value, &format!("{at}.value[{n}]")))
                .collect::<Result<_, _>>()?
        }
        (FilterOp::In, _) => {
            return Err(Error::invalid(format!(
                "{at}.value must be a list of 1 to {MAX_IN_VALUES} strings for in"
            )))
        }
        (_, Some(value)) => vec![one(value, &format!("{at}.value"))?],
        (_, None) => {
            return Err(Error::invalid(format!(
                "{at}.value is required for {}",
                op.name()
            )))
        }
    };
    Ok(Condition { field, op, values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filter(sent: Value) -> ContactFilter {
        ContactFilter::parse(&sent).unwrap()
    }

    fn refused(sent: Value) -> String {
        ContactFilter::parse(&sent).unwrap_err().to_string()
    }

    #[test]
    fn every_condition_must_hold() {
        let f = filter(json!([
            {"field": "region", "op": "in", "value": ["north", "east"]},
            {"field": "phoneNumber", "op": "prefix", "value": "+1 (212)"},
            {"field": "vip", "op": "exists"},
            {"field": "stage", "op": "ne", "value": "closed"},
        ]));
        let fields = |region: &'static str, vip: Option<&'static str>| {
            move |name: &str| match name {
                "region" => Some(region),
                "vip" => vip,
                _ => None,
            }
        };
        assert!(f.matches("+12125550100", fields("north", Some("yes"))));
        assert!(!f.matches("+13125550100", fields("north", Some("yes"))));
        assert!(!f.matches("+12125550100", fields("south", Some("yes"))));
        assert!(!f.matches("+12125550100", fields("east", None)));
        assert!(!f.matches("+12125550100", fields("east", Some(""))));
        assert_eq!(f.fields().collect::<Vec<_>>(), ["region", "vip", "stage"]);
        let eq = filter(json!([{"field": "stage", "op": "eq", "value": "closed"}]));
        assert!(eq.matches("1", |_| Some("closed")));
        assert!(!eq.matches("1", |_| None));
        let ne = filter(json!([{"field": "stage", "op": "ne", "value": "closed"}]));
        assert!(!ne.matches("1", |_| Some("closed")));
        assert!(ContactFilter::default().matches("1", |_| None));
    }

    #[test]
    fn shown_as_sent() {
        let sent = json!([
            {"field": "region", "op": "in", "value": ["north"]},
            {"field": "vip", "op": "exists"},
            {"field": "phoneNumber", "op": "eq", "value": "212-555-0100"},
        ]);
        let shown = json!([
            {"field": "region", "op": "in", "value": ["north"]},
            {"field": "vip", "op": "exists"},
            {"field": "phoneNumber", "op": "eq", "value": "2125550100"},
        ]);
        assert_eq!(Value::from(filter(sent).view()), shown);
        assert!(filter(json!(null)).is_empty());
        assert!(filter(json!([])).is_empty());
    }

    #[test]
    fn each_bad_condition_is_named() {
        let eleven: Vec<Value> = (0..11)
            .map(|_| json!({"field": "a", "op": "exists"}))
            .collect();
        assert_eq!(
            refused(Value::from(eleven)),
            "filter holds at most 10 conditions"
        );
        assert_eq!(refused(json!("x")), "filter must be a list of conditions");
        assert!(refused(json!([{"field": "createTime", "op": "exists"}]))
            .starts_with("filter[0].field must be phoneNumber or a contact field"));
        assert!(ContactFilter::parse(&json!([{"field": "customerName", "op": "exists"}])).is_ok());
        assert!(refused(json!([{"field": "a b", "op": "exists"}])).starts_with("filter[0].field"));
        assert_eq!(
            refused(json!([{"field": "a", "op": "like", "value": "x"}])),
            "filter[0].op must be one of eq, ne, in, prefix, exists"
        );
        assert_eq!(
            refused(json!([{"field": "a", "op": "eq"}])),
            "filter[0].value is required for eq"
        );
        assert_eq!(
            refused(json!([{"field": "a", "op": "eq", "value": 3}])),
            "filter[0].value must be a string of at most 1000 characters"
        );
        assert_eq!(
            refused(json!([{"field": "a", "op": "exists", "value": "x"}])),
            "filter[0].value must be absent for exists"
        );
        let many: Vec<String> = (0..101).map(|n| n.to_string()).collect();
        assert_eq!(
            refused(json!([{"field": "a", "op": "in", "value": many}])),
            "filter[0].value must be a list of 1 to 100 strings for in"
        );
        assert_eq!(
            refused(json!([{"field": "a", "op": "in", "value": ["x", 1]}])),
            "filter[0].value[1] must be a string of at most 1000 characters"
        );
        assert_eq!(
            refused(json!([{"field": "a", "op": "eq", "value": "x", "extra": 1}])),
            "filter[0].extra is not a field of a condition (field, op, value)"
        );
    }
}
