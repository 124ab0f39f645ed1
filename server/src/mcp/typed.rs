//! A server tool's arguments as one type ([`Arguments`]): a struct deriving `Deserialize` and
//! `JsonSchema` is both the input schema `tools/list` shows and the reader of a call's arguments
//! ([`read`]), so the two cannot disagree; `tab_id`, which the dispatcher reads, is added to the
//! schema by [`with_tab_id`]. The page tools' arguments are `bridge::page_ops`' (`page.rs`). The schema is derived in the compact form clients pay
//! tokens for (no meta-schema, titles, formats or defaults; an enum as one `enum` list), and a
//! call is checked against that same schema by `bridge::args` — the one check page tools use —
//! before serde reads it.

use bridge::WireError;
use rmcp::model::JsonObject;
use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::bad_argument;
use super::table::About;

/// How a tool's schema shows the `tab_id` argument. The dispatcher reads it
/// (`dispatch::take_tab_id`) before the tool's own arguments, so it is not a field of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TabIdArgument {
    /// Not shown.
    None,
    /// Shown, with what it means (`None`: it says nothing).
    Shown(Option<&'static str>),
}

/// A tool's arguments as one type: the input schema `tools/list` shows (without `tab_id`) and
/// the reader of a call's arguments (`tab_id` already taken out), which cannot disagree.
pub(crate) trait Arguments: Sized {
    fn schema() -> Value;
    /// Reads a call of the tool `about` describes. Every failure is `INVALID_ARGS` naming the
    /// tool and the argument.
    fn parse(about: &About, args: JsonObject) -> Result<Self, WireError>;
}

/// A struct deriving `Deserialize` and `JsonSchema`: its derived schema, and [`read`].
impl<A: JsonSchema + DeserializeOwned> Arguments for A {
    fn schema() -> Value {
        derived::<A>()
    }

    fn parse(about: &About, args: JsonObject) -> Result<A, WireError> {
        read(about, args)
    }
}

/// `schema` with the `tab_id` argument as `tab_id` shows it, listed first among the required
/// ones when `required` (then shown whatever `tab_id` says).
pub(crate) fn with_tab_id(mut schema: Value, tab_id: TabIdArgument, required: bool) -> Value {
    let description = match (tab_id, required) {
        (TabIdArgument::None, false) => return schema,
        (TabIdArgument::None, true) => None,
        (TabIdArgument::Shown(description), _) => description,
    };
    let mut property = json!({"type": "integer", "minimum": 0});
    if let Some(description) = description {
        property["description"] = json!(description);
    }
    schema["properties"]["tab_id"] = property;
    if required {
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        schema["required"] = std::iter::once(json!("tab_id")).chain(required).collect();
    }
    schema
}

/// A call's arguments (`tab_id` already taken out) read as `A`: checked against the schema
/// `tools/list` shows (`null` meaning "not given", as for every tool; an argument it does not
/// name refused, naming those it does), bounds included, then deserialized. Every failure is
/// `INVALID_ARGS` naming the tool and the argument.
fn read<A: JsonSchema + DeserializeOwned>(about: &About, args: JsonObject) -> Result<A, WireError> {
    let tool = about.name;
    // `tab_id` is listed among what the tool takes; the dispatcher says when it is missing.
    let schema = with_tab_id(derived::<A>(), about.tab_id, false);
    let mut args =
        bridge::args::checked(&schema, Value::Object(args)).map_err(|e| e.for_tool(tool))?;
    args.retain(|_, value| !value.is_null());
    check_bounds(&schema, &args).map_err(|message| bad_argument(tool, &message))?;
    serde_json::from_value(Value::Object(args)).map_err(|e| bad_argument(tool, &e.to_string()))
}

/// The bounds `bridge::args` leaves to the tool: numbers' `minimum`/`maximum` and strings'
/// `maxLength`, at the top level.
fn check_bounds(schema: &Value, args: &Map<String, Value>) -> Result<(), String> {
    for (name, value) in args {
        let property = &schema["properties"][name];
        let bound = |key: &str| property.get(key).and_then(Value::as_f64);
        if let Some(n) = value.as_f64() {
            let (min, max) = (bound("minimum"), bound("maximum"));
            if min.is_some_and(|min| n < min) || max.is_some_and(|max| n > max) {
                let range = match (min, max) {
                    (Some(min), Some(max)) => format!("from {min} to {max}"),
                    (Some(min), None) => format!("at least {min}"),
                    (None, Some(max)) => format!("at most {max}"),
                    (None, None) => unreachable!("a bound was crossed"),
                };
                return Err(format!("argument {name:?} must be {range}, got {value}"));
            }
        }
        if let (Some(text), Some(max)) = (value.as_str(), bound("maxLength"))
            && text.chars().count() as f64 > max
        {
            return Err(format!(
                "argument {name:?} must be at most {max} characters"
            ));
        }
    }
    Ok(())
}

/// `A`'s schema in the compact form `tools/list` shows.
fn derived<A: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.inline_subschemas = true;
    let mut schema = settings
        .with_transform(RecursiveTransform(compact))
        .into_generator()
        .into_root_schema_for::<A>();
    let root = schema.ensure_object();
    // The struct's own doc comment documents the code; the tool's description says it to clients.
    root.remove("description");
    root.remove("title");
    let mut schema = schema.to_value();
    if schema.get("properties").is_none() {
        schema["properties"] = json!({});
    }
    // A mistyped argument is refused, not silently ignored (as the page tools' schemas say too).
    schema["additionalProperties"] = json!(false);
    schema
}

/// Drops what costs tokens and says nothing a caller needs (formats such as `uint64`, defaults,
/// `null` in an optional argument's type — `null` is always "not given"), and turns an enum
/// whose variants carry doc comments (`oneOf` of constants) back into one `enum` list (schemars
/// lists the undocumented variants first, so documented ones go last in the type).
fn compact(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    // An `Option` of a type with a schema of its own: `anyOf` that type or `null`.
    if let Some(Value::Array(choices)) = object.get("anyOf")
        && let [only] = choices
            .iter()
            .filter(|choice| choice.get("type") != Some(&json!("null")))
            .collect::<Vec<_>>()
            .as_slice()
        && let Value::Object(only) = (*only).clone()
    {
        object.remove("anyOf");
        for (key, value) in only {
            object.entry(key).or_insert(value);
        }
        return compact(schema);
    }
    object.remove("format");
    object.remove("default");
    if object.get("additionalProperties") == Some(&Value::Bool(true)) {
        object.remove("additionalProperties");
    }
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(names)) = object.get_mut("enum") {
        names.retain(|name| !name.is_null());
    }
    if let Some(Value::Array(variants)) = object.get("oneOf")
        && let Some(names) = variants.iter().map(constants).collect::<Option<Vec<_>>>()
    {
        object.remove("oneOf");
        object.insert("type".into(), json!("string"));
        object.insert("enum".into(), Value::Array(names.concat()));
    }
}

/// For `#[schemars(transform = …)]` on a field whose type's doc comment documents the code, not
/// the argument.
pub(crate) fn without_description(schema: &mut Schema) {
    schema.remove("description");
}

/// The strings a variant's schema allows, when it is only constants.
fn constants(variant: &Value) -> Option<Vec<Value>> {
    if let Some(value @ Value::String(_)) = variant.get("const") {
        return Some(vec![value.clone()]);
    }
    variant
        .get("enum")?
        .as_array()?
        .iter()
        .map(|v| v.is_string().then(|| v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::table::{Hints, Needs};

    /// What a tool's arguments look like to the derive: docs, bounds, an optional enum, a flag.
    #[derive(Deserialize, JsonSchema, Debug, PartialEq)]
    struct Sample {
        /// What to say
        #[schemars(length(max = 5))]
        text: String,
        #[schemars(range(min = 1, max = 9))]
        count: Option<u32>,
        kind: Option<Kind>,
        #[serde(default)]
        loud: bool,
    }

    /// A kind (this doc comment documents the type, and is kept off the argument).
    #[derive(Deserialize, JsonSchema, Debug, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Plain,
        /// Documented variants make schemars write `oneOf`.
        Fancy,
    }

    use serde::Deserialize;

    #[test]
    fn the_schema_is_compact_and_says_what_a_caller_needs() {
        let schema = with_tab_id(
            Sample::schema(),
            TabIdArgument::Shown(Some("which tab")),
            false,
        );
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "text": {"type": "string", "description": "What to say", "maxLength": 5},
                    "count": {"type": "integer", "minimum": 1, "maximum": 9},
                    "kind": {"type": "string", "enum": ["plain", "fancy"],
                             "description": "A kind (this doc comment documents the type, and is kept off the argument)."},
                    "loud": {"type": "boolean"},
                    "tab_id": {"type": "integer", "minimum": 0, "description": "which tab"},
                },
                "required": ["text"],
            })
        );
        let required = with_tab_id(Sample::schema(), TabIdArgument::None, true);
        assert_eq!(required["required"], json!(["tab_id", "text"]));
        assert_eq!(
            required["properties"]["tab_id"],
            json!({"type": "integer", "minimum": 0})
        );
        let hidden = with_tab_id(Sample::schema(), TabIdArgument::None, false);
        assert!(hidden["properties"]["tab_id"].is_null());
    }

    /// A tool taking [`Sample`] and, optionally, `tab_id`.
    const SAMPLE: About = About {
        name: "sample",
        title: "Sample",
        description: "A sample.",
        hints: Hints::READS_AGAIN_ALIKE,
        tab_id: TabIdArgument::Shown(None),
        needs: Needs::Nothing,
    };

    fn read_sample(args: Value) -> Result<Sample, String> {
        let Value::Object(args) = args else {
            unreachable!("the tests give objects")
        };
        Sample::parse(&SAMPLE, args).map_err(|e| {
            assert_eq!(e.code, bridge::ErrorCode::InvalidArgs);
            e.message
        })
    }

    #[test]
    fn a_call_is_read_with_null_meaning_not_given() {
        assert_eq!(
            read_sample(json!({"text": "hi", "count": null, "kind": "fancy", "loud": null})),
            Ok(Sample {
                text: "hi".into(),
                count: None,
                kind: Some(Kind::Fancy),
                loud: false
            })
        );
    }

    #[test]
    fn every_misfit_names_the_tool_and_the_argument() {
        for (args, message) in [
            (json!({}), "sample: missing required argument \"text\""),
            (
                json!({"text": 1}),
                "sample: argument \"text\" must be of type string, got 1",
            ),
            (
                json!({"text": "toolong"}),
                "sample: argument \"text\" must be at most 5 characters",
            ),
            (
                json!({"text": "a", "count": 10}),
                "sample: argument \"count\" must be from 1 to 9, got 10",
            ),
            (
                json!({"text": "a", "count": 0}),
                "sample: argument \"count\" must be from 1 to 9, got 0",
            ),
            (
                json!({"text": "a", "kind": "odd"}),
                "sample: argument \"kind\" must be one of \"plain\", \"fancy\", got \"odd\"",
            ),
            (
                json!({"text": "a", "tabId": 3}),
                "sample: unknown argument \"tabId\" (the tool takes count, kind, loud, tab_id, text)",
            ),
        ] {
            assert_eq!(read_sample(args.clone()).unwrap_err(), message, "{args}");
        }
    }
}
