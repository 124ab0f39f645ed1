//! Decoding of messages tagged by `"type"` (the wire and page protocols) through a
//! `serde_json::Value`, field by field.
//!
//! Why not `#[derive(Deserialize)]` with `#[serde(tag = "type")]`: serde buffers an internally
//! tagged enum into its private `Content` tree and deserializes every variant's fields again from
//! that, so each field type (adapters included) is compiled once more per input kind: 76 KB of the
//! worker's wasm and 32 KB of the injector's (BENCHMARKS.md). Here a message is first a `Value`,
//! and every field type is decoded from a `Value` only. The errors are serde's own ("missing field
//! `id`", "invalid type: …", "unknown variant `x`, expected one of …"); unknown fields are ignored.

use serde::de::{DeserializeOwned, Error as _};
use serde_json::{Map, Value};

/// The fields of one message, taken by name.
pub(crate) struct Fields(Map<String, Value>);

impl Fields {
    /// A required field.
    pub(crate) fn req<T: DeserializeOwned>(
        &mut self,
        name: &'static str,
    ) -> Result<T, serde_json::Error> {
        match self.0.remove(name) {
            Some(value) => T::deserialize(value),
            None => Err(serde_json::Error::missing_field(name)),
        }
    }

    /// An optional field, or `T`'s default when absent (`#[serde(default)]`, and `Option` fields).
    pub(crate) fn opt<T: DeserializeOwned + Default>(
        &mut self,
        name: &'static str,
    ) -> Result<T, serde_json::Error> {
        match self.0.remove(name) {
            Some(value) => T::deserialize(value),
            None => Ok(T::default()),
        }
    }

    /// The fields of an object with no tag.
    pub(crate) fn of(value: Value) -> Result<Fields, serde_json::Error> {
        match value {
            Value::Object(map) => Ok(Fields(map)),
            other => Err(serde_json::Error::invalid_type(
                unexpected(&other),
                &"a message object",
            )),
        }
    }

    /// The message itself as one struct (a newtype variant): every field, unknown ones included.
    pub(crate) fn rest<T: DeserializeOwned>(self) -> Result<T, serde_json::Error> {
        T::deserialize(Value::Object(self.0))
    }
}

/// Splits a message into its `"type"` and its other fields.
pub(crate) fn split(value: Value) -> Result<(String, Fields), serde_json::Error> {
    split_by(value, "type")
}

/// Splits an object tagged by field `tag` into the tag and its other fields.
pub(crate) fn split_by(
    value: Value,
    tag: &'static str,
) -> Result<(String, Fields), serde_json::Error> {
    let Fields(mut map) = Fields::of(value)?;
    match map.remove(tag) {
        Some(Value::String(kind)) => Ok((kind, Fields(map))),
        Some(other) => Err(serde_json::Error::invalid_type(
            unexpected(&other),
            &"a message type name",
        )),
        None => Err(serde_json::Error::missing_field(tag)),
    }
}

/// The error for a `"type"` not in `types`.
pub(crate) fn unknown_type(kind: &str, types: &'static [&'static str]) -> serde_json::Error {
    serde_json::Error::unknown_variant(kind, types)
}

fn unexpected(value: &Value) -> serde::de::Unexpected<'_> {
    use serde::de::Unexpected;
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(_) => Unexpected::Other("number"),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// `impl Deserialize` for a tagged message enum through [`decode`]: `$decode` is its
/// `fn(Value) -> Result<Self, serde_json::Error>`.
macro_rules! deserialize_via_value {
    ($ty:ty, $decode:path) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                $decode(value).map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use deserialize_via_value;
