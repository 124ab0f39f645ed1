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

/// Declares an enum of messages tagged by `$tag` (each variant written `"its_tag" => Variant`),
/// with everything that follows from that one list: the `Serialize` tag and each variant's
/// name on the wire (`#[serde(rename)]`), the list of tags (`$tags`, for the errors that name
/// them), `type_name`, and the hand-written decoding ([`Fields`], why: this module's doc) behind
/// `Deserialize`. A field with `#[serde(default…)]` may be absent (its default), one with
/// `#[serde(flatten)]` is taken by its type's `take(&mut Fields)`, every other one is required:
/// the same rules as a derived `Deserialize` (a page tool's `op: crate::page_ops::WireOp` is read
/// as the JSON value it is, by `WireOp::take`). Another `serde` attribute on a field does not
/// compile. The expansion is the code that used to be written by hand, so the wasm builds pay
/// nothing for it.
macro_rules! tagged_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident by $tag:literal, listed in $tags:ident {
            $(
                $(#[$variant_meta:meta])*
                $wire:literal => $variant:ident $({ $($fields:tt)* })? $(( $inner:ty ))?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[serde(tag = $tag)]
        $vis enum $name {
            $(
                $(#[$variant_meta])*
                #[serde(rename = $wire)]
                $variant $({ $($fields)* })? $(( $inner ))?,
            )*
        }

        const $tags: &[&str] = &[$($wire),*];

        impl $name {
            /// The tag the message is written with.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $($name::$variant { .. } => $wire,)*
                }
            }

            /// Decodes a message from its JSON value (what `Deserialize` does).
            pub fn from_value(value: serde_json::Value) -> Result<Self, serde_json::Error> {
                let (kind, mut fields) = $crate::tagged::split_by(value, $tag)?;
                Ok(match kind.as_str() {
                    $($wire => $crate::tagged::decode_variant!(
                        fields, $name::$variant $({ $($fields)* })? $(( $inner ))?
                    ),)*
                    _ => return Err($crate::tagged::unknown_type(&kind, $tags)),
                })
            }
        }

        $crate::tagged::deserialize_via_value!($name, $name::from_value);
    };
}
pub(crate) use tagged_enum;

/// One variant of a [`tagged_enum!`], decoded from the message's other `$f`ields.
macro_rules! decode_variant {
    ($f:ident, $name:ident :: $variant:ident { $($fields:tt)* }) => {
        $crate::tagged::decode_fields!($f, $name::$variant, [] $($fields)*)
    };
    ($f:ident, $name:ident :: $variant:ident ( $inner:ty )) => {
        $name::$variant($f.rest()?)
    };
    ($f:ident, $name:ident :: $variant:ident) => {
        $name::$variant
    };
}
pub(crate) use decode_variant;

/// A struct variant's fields, one at a time: what is read so far is in `[…]`.
macro_rules! decode_fields {
    ($f:ident, $name:ident :: $variant:ident, [$($read:tt)*]) => {
        $name::$variant { $($read)* }
    };
    (
        $f:ident, $name:ident :: $variant:ident, [$($read:tt)*]
        $(#[doc = $doc:literal])* #[serde(default $($how:tt)*)] $field:ident : $ty:ty
        $(, $($rest:tt)*)?
    ) => {
        $crate::tagged::decode_fields!(
            $f, $name::$variant, [$($read)* $field: $f.opt(stringify!($field))?,] $($($rest)*)?
        )
    };
    (
        $f:ident, $name:ident :: $variant:ident, [$($read:tt)*]
        $(#[doc = $doc:literal])* #[serde(flatten)] $field:ident : $ty:ty
        $(, $($rest:tt)*)?
    ) => {
        $crate::tagged::decode_fields!(
            $f, $name::$variant, [$($read)* $field: <$ty>::take(&mut $f)?,] $($($rest)*)?
        )
    };
    // A page tool's operation, `op`, as the JSON value it is (the worker reads no more): through
    // `WireOp::take`, the reader a page call's `op` goes through too, so the wasm builds carry one.
    (
        $f:ident, $name:ident :: $variant:ident, [$($read:tt)*]
        $(#[doc = $doc:literal])* op : crate::page_ops::WireOp
        $(, $($rest:tt)*)?
    ) => {
        $crate::tagged::decode_fields!(
            $f, $name::$variant, [$($read)* op: $crate::page_ops::WireOp::take(&mut $f)?,]
            $($($rest)*)?
        )
    };
    (
        $f:ident, $name:ident :: $variant:ident, [$($read:tt)*]
        $(#[doc = $doc:literal])* $field:ident : $ty:ty
        $(, $($rest:tt)*)?
    ) => {
        $crate::tagged::decode_fields!(
            $f, $name::$variant, [$($read)* $field: $f.req(stringify!($field))?,] $($($rest)*)?
        )
    };
}
pub(crate) use decode_fields;
