//! Typed request bodies with D1/D6's exact messages.
//!
//! A request type derives `Deserialize` (for the handler) and `ToSchema` (for the OpenAPI
//! document) and declares its fields with the wrapper types here. Each wrapper refuses a wrong
//! JSON type with the rest of a sentence ("must be a string"); [`from_object`] puts the field's
//! name in front of it. An absent or `null` optional field is `None`; a missing required one is
//! "`<field>` is required". Unknown fields are ignored (D6).

use outbound_model::error::Error;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Deserializes a request object into `T`, naming the field a refusal is about.
pub fn from_object<T: DeserializeOwned>(object: Map<String, Value>) -> Result<T, Error> {
    serde_path_to_error::deserialize(Value::Object(object)).map_err(|error| {
        let field = error.path().to_string();
        let message = error.inner().to_string();
        match message.strip_prefix("missing field `") {
            Some(rest) => Error::invalid(format!("{} is required", rest.trim_end_matches('`'))),
            // A refusal from a [`Flat`] part already names its field.
            None if field == "." => Error::invalid(message),
            None => Error::invalid(format!("{field} {message}")),
        }
    })
}

/// Fields shared by several requests, flattened into each (`#[serde(flatten)]`): read from the
/// same object by [`from_object`], so a refusal still names the field (serde's flatten alone
/// loses it). Document the field with `#[schema(value_type = T)]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flat<T>(pub T);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Flat<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = Map::<String, Value>::deserialize(deserializer)?;
        from_object(object)
            .map(Flat)
            .map_err(|refused| D::Error::custom(refused.to_string()))
    }
}

/// A JSON string. `null` for a required one reads as missing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Text(pub String);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(Text(text)),
            Value::Null => Err(D::Error::custom("is required")),
            _ => Err(D::Error::custom("must be a string")),
        }
    }
}

/// The integer a JSON number stands for: `3` or `3.0` (JSON Schema's integers), not `3.5`.
fn whole(number: &serde_json::Number) -> Option<i64> {
    number.as_i64().or_else(|| {
        number
            .as_f64()
            .filter(|value| value.fract() == 0.0 && value.abs() < 9.0e15)
            .map(|value| value as i64)
    })
}

/// A JSON integer (no fraction, no string).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Integer(pub i64);

impl<'de> Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Number(number) => whole(&number)
                .map(Integer)
                .ok_or_else(|| D::Error::custom("must be an integer")),
            Value::Null => Err(D::Error::custom("is required")),
            _ => Err(D::Error::custom("must be an integer")),
        }
    }
}

/// A JSON number, with or without a fraction (no string).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decimal(pub f64);

impl<'de> Deserialize<'de> for Decimal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Number(number) => number
                .as_f64()
                .filter(|value| value.is_finite())
                .map(Decimal)
                .ok_or_else(|| D::Error::custom("must be a number")),
            Value::Null => Err(D::Error::custom("is required")),
            _ => Err(D::Error::custom("must be a number")),
        }
    }
}

/// An integer from `MIN` to `MAX`; any other value or type is refused with that range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ranged<const MIN: i64, const MAX: i64>(pub i64);

impl<'de, const MIN: i64, const MAX: i64> Deserialize<'de> for Ranged<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Number(number) => whole(&number)
                .filter(|value| (MIN..=MAX).contains(value))
                .map(Ranged),
            _ => None,
        }
        .ok_or_else(|| D::Error::custom(format!("must be an integer from {MIN} to {MAX}")))
    }
}

/// An optional field that `null` clears (D14): absent keeps the stored value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Nullable<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> Nullable<T> {
    /// The change it asks for, each value checked by `parse`.
    pub fn change<U, E>(
        self,
        parse: impl FnOnce(T) -> Result<U, E>,
    ) -> Result<outbound_model::settings::Change<U>, E> {
        use outbound_model::settings::Change;
        Ok(match self {
            Nullable::Absent => Change::Keep,
            Nullable::Null => Change::Clear,
            Nullable::Value(value) => Change::Set(parse(value)?),
        })
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Nullable<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            None => Nullable::Null,
            Some(value) => Nullable::Value(value),
        })
    }
}

/// An array of strings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Strings(pub Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let refused = || D::Error::custom("must be an array of strings");
        match Value::deserialize(deserializer)? {
            Value::Array(values) => values
                .into_iter()
                .map(|value| match value {
                    Value::String(text) => Ok(text),
                    _ => Err(refused()),
                })
                .collect::<Result<_, _>>()
                .map(Strings),
            _ => Err(refused()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Sample {
        task_name: Text,
        #[serde(default)]
        task_desc: Option<Text>,
        #[serde(default)]
        file_size: Option<Integer>,
        #[serde(default)]
        priority: Option<Ranged<1, 5>>,
        #[serde(default)]
        contact_ids: Option<Strings>,
    }

    fn refusal(body: Value) -> String {
        let Value::Object(object) = body else {
            panic!("an object")
        };
        match from_object::<Sample>(object) {
            Err(Error::Invalid(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn each_refusal_names_its_field() {
        assert_eq!(refusal(json!({})), "taskName is required");
        assert_eq!(refusal(json!({"taskName": null})), "taskName is required");
        assert_eq!(refusal(json!({"taskName": 5})), "taskName must be a string");
        let named = |extra: Value| {
            let mut body = json!({"taskName": "t"});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            refusal(body)
        };
        assert_eq!(named(json!({"taskDesc": []})), "taskDesc must be a string");
        assert_eq!(
            named(json!({"fileSize": 1.5})),
            "fileSize must be an integer"
        );
        assert_eq!(
            named(json!({"fileSize": "9"})),
            "fileSize must be an integer"
        );
        assert_eq!(
            named(json!({"priority": 6})),
            "priority must be an integer from 1 to 5"
        );
        assert_eq!(
            named(json!({"priority": "1"})),
            "priority must be an integer from 1 to 5"
        );
        assert_eq!(
            named(json!({"contactIds": ["a", 1]})),
            "contactIds must be an array of strings"
        );
    }

    #[test]
    fn null_and_absent_optionals_are_none_and_unknown_fields_are_ignored() {
        let Value::Object(object) =
            json!({"taskName": "t", "taskDesc": null, "surprise": {"x": 1}, "priority": 3.0})
        else {
            unreachable!()
        };
        let sample: Sample = from_object(object).unwrap();
        assert_eq!(sample.task_name, Text("t".into()));
        assert_eq!(sample.task_desc, None);
        assert_eq!(sample.file_size, None);
        assert_eq!(sample.priority, Some(Ranged(3)));
    }
}
