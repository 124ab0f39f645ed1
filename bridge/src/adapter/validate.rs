//! The rules a well-formed adapter must also follow: names, patterns and schemas are valid, every
//! `{{variable}}` is an argument or was read by an earlier step, `return` ends its list,
//! `navigate` is a top-level step, and so on. Every problem is reported, each at its path.

use std::collections::BTreeSet;

use serde_json::Value;

use super::locate::{JsonPath, Problem};
use super::step::{Condition, FetchBody, Loop, OptionChoice, Read, Step, TextMatch};
use super::{Adapter, StateExtractor, ToolDef};
use crate::names::{MAX_ADAPTER_NAME, MAX_TOOL_NAME, is_identifier, public_tool_name};
use crate::pattern::MatchPattern;
use crate::template;

impl Adapter {
    /// Every semantic problem (the JSON already has the right shape).
    pub fn validate(&self) -> Vec<Problem> {
        let mut v = Validator::default();
        let root = JsonPath::default();
        if !is_identifier(&self.name, MAX_ADAPTER_NAME) {
            v.problem(
                root.key("name"),
                format!(
                    "adapter name {:?} is not valid: expected [a-z][a-z0-9_]*, at most {MAX_ADAPTER_NAME} characters",
                    self.name
                ),
            );
        }
        if let Some(why) = crate::names::reserved_adapter_name(&self.name) {
            v.problem(
                root.key("name"),
                format!("the adapter name {:?} is reserved {why}", self.name),
            );
        }
        if self.matches.is_empty() {
            v.problem(root.key("match"), "expected at least one match pattern");
        }
        for (i, pattern) in self.matches.iter().enumerate() {
            if let Err(e) = MatchPattern::parse(pattern) {
                v.problem(root.key("match").index(i), e.to_string());
            }
        }
        if self.tools.is_empty() {
            v.problem(root.key("tools"), "expected at least one tool");
        }
        if let Some(selector) = &self.match_selector
            && selector.trim().is_empty()
        {
            v.problem(
                root.key("match_selector"),
                "expected a CSS selector such as \".todoapp\"",
            );
        }
        if let Some(url) = &self.test_url
            && !(crate::pattern::is_web_url(url) && self.matches_url(url))
        {
            v.problem(
                root.key("test_url"),
                format!(
                    "{url:?}: expected an http(s) URL that one of the `match` patterns matches"
                ),
            );
        }
        if let Some(state) = &self.state {
            v.state(state, &root.key("state"));
        }
        let mut seen = BTreeSet::new();
        for (i, tool) in self.tools.iter().enumerate() {
            let path = root.key("tools").index(i);
            v.tool(&self.name, tool, &path);
            if !seen.insert(tool.name.as_str()) {
                v.problem(
                    path.key("name"),
                    format!("duplicate tool name {:?}", tool.name),
                );
            }
        }
        v.problems
    }
}

#[derive(Default)]
struct Validator {
    problems: Vec<Problem>,
    /// How deep in nested steps (`within`, `for_each`, `if`, `frame`) the step checked sits.
    depth: usize,
    /// The `input_schema.properties` of the tool checked (`null` for a state extractor).
    arguments: Value,
}

impl Validator {
    fn problem(&mut self, path: JsonPath, message: impl Into<String>) {
        self.problems.push(Problem::at(path, message));
    }

    fn tool(&mut self, adapter: &str, tool: &ToolDef, path: &JsonPath) {
        if !is_identifier(&tool.name, MAX_TOOL_NAME) {
            self.problem(
                path.key("name"),
                format!(
                    "tool name {:?} is not valid: expected [a-z][a-z0-9_]*",
                    tool.name
                ),
            );
        } else if public_tool_name(adapter, &tool.name).len() > MAX_TOOL_NAME {
            self.problem(
                path.key("name"),
                format!(
                    "\"{adapter}_{}\" is longer than {MAX_TOOL_NAME} characters",
                    tool.name
                ),
            );
        }
        if tool.description.trim().is_empty() {
            self.problem(
                path.key("description"),
                "expected a description for the model",
            );
        }
        let schema = &tool.input_schema;
        let schema_path = path.key("input_schema");
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            self.problem(
                schema_path.clone(),
                "expected a JSON Schema with \"type\": \"object\"",
            );
        }
        if let Some(props) = schema.get("properties")
            && !props.is_object()
        {
            self.problem(schema_path.key("properties"), "expected an object");
        }
        if let Some(output) = &tool.output_schema
            && output.get("type").and_then(Value::as_str) != Some("object")
        {
            self.problem(
                path.key("output_schema"),
                "expected a JSON Schema with \"type\": \"object\" (it describes structuredContent, \
                 where a result that is not an object is {\"result\": <value>})",
            );
        }
        if tool.steps.is_empty() {
            self.problem(path.key("steps"), "expected at least one step");
        }
        let mut known = tool.argument_names();
        self.arguments = schema.get("properties").cloned().unwrap_or_default();
        self.steps(&tool.steps, &path.key("steps"), &mut known);
    }

    fn state(&mut self, state: &StateExtractor, path: &JsonPath) {
        let steps_path = path.key("steps");
        if !matches!(state.steps.last(), Some(Step::Return { .. })) {
            self.problem(
                steps_path.clone(),
                "expected the state's steps to end with a \"return\" step (its value is the state)",
            );
        }
        self.arguments = Value::Null;
        self.steps(&state.steps, &steps_path, &mut BTreeSet::new());
    }

    fn steps(&mut self, steps: &[Step], path: &JsonPath, known: &mut BTreeSet<String>) {
        for (i, step) in steps.iter().enumerate() {
            let path = path.index(i);
            if matches!(step, Step::Return { .. }) && i + 1 != steps.len() {
                self.problem(
                    path.key("step"),
                    "\"return\" must be the last step of its list",
                );
            }
            self.step(step, &path, known);
        }
    }

    fn step(&mut self, step: &Step, path: &JsonPath, known: &mut BTreeSet<String>) {
        self.depth += 1;
        self.step_inner(step, path, known);
        self.depth -= 1;
    }

    fn step_inner(&mut self, step: &Step, path: &JsonPath, known: &mut BTreeSet<String>) {
        match step {
            Step::Wait { selector, .. } => self.selector(selector, &path.key("selector"), known),
            Step::Click {
                selector,
                navigates,
            } => {
                self.optional_selector(selector, path, known);
                self.navigates(*navigates, "click", path);
            }
            Step::Dblclick { selector }
            | Step::Hover { selector }
            | Step::ScrollIntoView { selector }
            | Step::Check { selector }
            | Step::Uncheck { selector }
            | Step::Blur { selector } => self.optional_selector(selector, path, known),
            Step::Fill { selector, value } => {
                self.selector(selector, &path.key("selector"), known);
                self.template(value, &path.key("value"), known);
            }
            Step::Clear { selector } => self.selector(selector, &path.key("selector"), known),
            Step::Type {
                selector,
                value,
                at,
                nth: _,
            } => {
                self.selector(selector, &path.key("selector"), known);
                self.template(value, &path.key("value"), known);
                if let Some(at) = at {
                    self.template(at, &path.key("at"), known);
                }
            }
            Step::Caret {
                selector,
                at,
                nth: _,
            } => {
                self.selector(selector, &path.key("selector"), known);
                self.template(at, &path.key("at"), known);
            }
            Step::Drag { selector, to } => {
                self.selector(selector, &path.key("selector"), known);
                self.selector(to, &path.key("to"), known);
            }
            Step::SelectText {
                selector,
                value,
                nth: _,
            } => {
                self.selector(selector, &path.key("selector"), known);
                if let Some(value) = value {
                    self.template(value, &path.key("value"), known);
                }
            }
            Step::Upload { selector, files } => {
                self.selector(selector, &path.key("selector"), known);
                self.upload_files(files, &path.key("files"));
            }
            Step::Press {
                selector,
                key,
                navigates,
            } => {
                self.optional_selector(selector, path, known);
                self.navigates(*navigates, "press", path);
                if let Err(e) = crate::keys::parse_chord(key) {
                    self.problem(path.key("key"), e.to_string());
                }
            }
            Step::Select { selector, option } => {
                self.selector(selector, &path.key("selector"), known);
                match option {
                    OptionChoice::Value(v) => self.template(v, &path.key("value"), known),
                    OptionChoice::Label(l) => self.template(l, &path.key("label"), known),
                }
            }
            Step::Read {
                selector,
                read,
                into,
                ..
            } => {
                self.optional_selector(selector, path, known);
                if *read == Read::Count && selector.is_none() {
                    self.problem(path.key("read"), "`count` needs a `selector` to count");
                }
                if matches!(read, Read::Url(_)) && selector.is_some() {
                    self.problem(
                        path.key("read"),
                        format!(
                            "\"{}\" reads the page's address: it takes no selector",
                            String::from(read.clone())
                        ),
                    );
                }
                self.into(into, &path.key("into"), known);
            }
            Step::Extract {
                selector,
                fields,
                into,
            } => {
                self.selector(selector, &path.key("selector"), known);
                if fields.is_empty() {
                    self.problem(path.key("fields"), "expected at least one field");
                }
                for (name, field) in fields {
                    let field_path = path.key("fields").key(name);
                    if matches!(field.read, Read::Url(_)) {
                        self.problem(
                            field_path.key("read"),
                            "an extract field reads an element; read the page's address with a \"read\" step",
                        );
                    }
                    match &field.selector {
                        Some(selector) => {
                            self.selector(selector, &field_path.key("selector"), known);
                        }
                        None if field.read == Read::Count => {
                            self.problem(
                                field_path.key("read"),
                                "`count` needs a `selector` to count",
                            );
                        }
                        None => {}
                    }
                }
                self.into(into, &path.key("into"), known);
            }
            Step::Within {
                selector,
                text_selector,
                read,
                text,
                steps,
                ..
            } => {
                self.selector(selector, &path.key("selector"), known);
                if matches!(read, Read::Url(_)) {
                    self.problem(
                        path.key("read"),
                        "\"within\" compares an element's text; \"url\" reads the page's address (a \"read\" step)",
                    );
                }
                if let Some(ts) = text_selector {
                    self.selector(ts, &path.key("text_selector"), known);
                }
                match text {
                    TextMatch::Equals(t) => self.template(t, &path.key("text_equals"), known),
                    TextMatch::Contains(t) => self.template(t, &path.key("text_contains"), known),
                }
                self.body(steps, &path.key("steps"), known);
            }
            Step::ForEach { over, steps, into } => {
                match over {
                    Loop::Elements { selector } => {
                        self.selector(selector, &path.key("selector"), known);
                        self.body(steps, &path.key("steps"), known);
                    }
                    Loop::Items { items, item_var } => {
                        self.item_loop(items, item_var, steps, path, known)
                    }
                }
                if let Some(into) = into {
                    self.into(into, &path.key("into"), known);
                }
            }
            Step::If {
                condition,
                then,
                otherwise,
            } => {
                match condition {
                    Condition::Element(selector) => {
                        self.selector(selector, &path.key("selector"), known)
                    }
                    Condition::Var(var) => {
                        self.known_names(&[var.as_str()], &path.key("var"), known)
                    }
                }
                if then.is_empty() && otherwise.is_empty() {
                    self.problem(path.key("then"), "expected steps in \"then\" or \"else\"");
                }
                self.steps(then, &path.key("then"), known);
                self.steps(otherwise, &path.key("else"), known);
            }
            Step::Frame { selector, steps } => {
                self.selector(selector, &path.key("selector"), known);
                self.body(steps, &path.key("steps"), known);
            }
            Step::Navigate { url } => {
                if self.depth > 1 {
                    self.problem(
                        path.key("step"),
                        "\"navigate\" must be a top-level step (the call continues in the new page with the next top-level step)",
                    );
                }
                // Arguments are percent-encoded into the URL, so its scheme is the template's own.
                let literal = url.split("{{").next().unwrap_or_default();
                if !crate::pattern::is_navigable(literal) {
                    self.problem(
                        path.key("url"),
                        format!(
                            "{url:?} is not a page a tool may navigate to: expected an http(s) or a relative URL"
                        ),
                    );
                }
                self.template(url, &path.key("url"), known);
            }
            Step::Fail { message } => self.template(message, &path.key("message"), known),
            Step::Dialog { answer } => {
                if let crate::dialog::DialogAnswer::Accept { text: Some(text) } = answer {
                    self.template(text, &path.key("text"), known);
                }
            }
            Step::Return { value } => match template::value_references(value) {
                Ok(names) => self.known_names(&names, &path.key("value"), known),
                Err(e) => self.problem(path.key("value"), e.to_string()),
            },
            Step::Fetch {
                url, into, body, ..
            } => {
                match crate::fetch::check_url_template(url) {
                    Ok(()) => self.template(url, &path.key("url"), known),
                    Err(why) => self.problem(path.key("url"), why),
                }
                if let FetchBody::Records { records, fields } = body {
                    if let Some(records) = records
                        && let Err(why) = crate::fetch::check_pointer(records)
                    {
                        self.problem(path.key("records"), why);
                    }
                    if fields.is_empty() {
                        self.problem(path.key("fields"), "expected at least one field");
                    }
                    for (name, pointer) in fields {
                        if let Err(why) = crate::fetch::check_pointer(pointer) {
                            self.problem(path.key("fields").key(name), why);
                        }
                    }
                }
                self.into(into, &path.key("into"), known);
            }
        }
    }

    /// `navigates` continues the call in the next page at the next top-level step, so only a
    /// top-level step may say it.
    fn navigates(&mut self, navigates: bool, kind: &str, path: &JsonPath) {
        if navigates && self.depth > 1 {
            self.problem(
                path.key("navigates"),
                format!("a \"{kind}\" that navigates must be a top-level step (the call continues in the new page with the next top-level step)"),
            );
        }
    }

    fn optional_selector(
        &mut self,
        selector: &Option<String>,
        step: &JsonPath,
        known: &BTreeSet<String>,
    ) {
        if let Some(selector) = selector {
            self.selector(selector, &step.key("selector"), known);
        }
    }

    fn body(&mut self, steps: &[Step], path: &JsonPath, known: &mut BTreeSet<String>) {
        if steps.is_empty() {
            self.problem(path.clone(), "expected at least one step");
        }
        self.steps(steps, path, known);
    }

    fn selector(&mut self, selector: &str, path: &JsonPath, known: &BTreeSet<String>) {
        if selector.trim().is_empty() {
            self.problem(
                path.clone(),
                "expected a CSS selector or a locator such as role=button[name=\"Save\"]",
            );
        } else if let Err(why) = crate::locator::Locator::parse(selector) {
            self.problem(path.clone(), why);
        } else if crate::locator::is_locator(selector)
            && selector.contains("{{")
            && !crate::locator::value_is_quoted(selector)
        {
            self.problem(
                path.clone(),
                "in a locator, write a {{variable}} inside double quotes, e.g. label=\"{{field}}\"",
            );
        }
        self.template(selector, path, known);
    }

    fn template(&mut self, text: &str, path: &JsonPath, known: &BTreeSet<String>) {
        match template::references(text) {
            Ok(names) => self.known_names(&names, path, known),
            Err(e) => self.problem(path.clone(), e.to_string()),
        }
    }

    fn known_names(&mut self, names: &[&str], path: &JsonPath, known: &BTreeSet<String>) {
        for name in names {
            if !known.contains(*name) {
                self.problem(
                    path.clone(),
                    format!(
                        "{{{{{name}}}}} is neither an argument in input_schema.properties nor read by an earlier step (known: {})",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.iter().cloned().collect::<Vec<_>>().join(", ")
                        }
                    ),
                );
            }
        }
    }

    fn into(&mut self, into: &str, path: &JsonPath, known: &mut BTreeSet<String>) {
        if !is_identifier(into, 64) {
            self.problem(
                path.clone(),
                format!("variable name {into:?} is not valid: expected [a-z][a-z0-9_]*"),
            );
        }
        known.insert(into.to_owned());
    }

    /// An `upload` step's `files`: exactly one argument of the tool (never a value the page gave:
    /// the server reads the files before the call starts), holding a name or a list of names.
    fn upload_files(&mut self, files: &str, path: &JsonPath) {
        let argument = template::sole_variable(files).filter(|name| !name.contains('.'));
        let Some(name) = argument else {
            return self.problem(
                path.clone(),
                format!(
                    "expected exactly one argument holding a file name or a list of them, such as \"{{{{files}}}}\", got {files:?}"
                ),
            );
        };
        let Some(declared) = self.arguments.get(name) else {
            return self.problem(
                path.clone(),
                format!(
                    "{{{{{name}}}}} must be an argument in input_schema.properties: the server reads the files before the call starts, so they cannot come from the page"
                ),
            );
        };
        let kind = declared.get("type");
        if kind.is_some_and(|k| !matches!(k.as_str(), Some("string" | "array"))) {
            self.problem(
                path.clone(),
                format!(
                    "the argument {name:?} names files, so input_schema.properties.{name} needs \"type\": \"string\" or \"array\" (of strings)"
                ),
            );
        }
    }

    /// A `for_each` over `items`: exactly one variable holding an array (an argument must declare
    /// `"type": "array"`, so callers get INVALID_ARGS for anything else), bound item by item to
    /// `as`, which only the body knows. What the body reads stays known after the loop.
    fn item_loop(
        &mut self,
        items: &str,
        item_var: &str,
        steps: &[Step],
        path: &JsonPath,
        known: &mut BTreeSet<String>,
    ) {
        let items_path = path.key("items");
        match template::sole_variable(items) {
            Some(name) => {
                let root = name.split('.').next().unwrap_or(name);
                self.known_names(&[root], &items_path, known);
                let declared = self.arguments.get(name).map(|p| p.get("type"));
                if let Some(declared) = declared
                    && declared.and_then(Value::as_str) != Some("array")
                {
                    self.problem(
                        items_path.clone(),
                        format!(
                            "the argument {name:?} is iterated over, so input_schema.properties.{name} needs \"type\": \"array\" (it has {})",
                            declared.map_or("no type".to_owned(), Value::to_string)
                        ),
                    );
                }
            }
            None => self.problem(
                items_path.clone(),
                format!(
                    "expected exactly one variable holding an array, such as \"{{{{tags}}}}\", got {items:?}"
                ),
            ),
        }
        let mut inner = known.clone();
        if !is_identifier(item_var, 64) {
            self.problem(
                path.key("as"),
                format!("variable name {item_var:?} is not valid: expected [a-z][a-z0-9_]*"),
            );
        } else if known.contains(item_var) {
            self.problem(
                path.key("as"),
                format!(
                    "{item_var:?} is already an argument or a variable read earlier: name the item differently"
                ),
            );
        } else {
            inner.insert(item_var.to_owned());
        }
        self.body(steps, &path.key("steps"), &mut inner);
        known.extend(inner.into_iter().filter(|name| name != item_var));
    }
}
