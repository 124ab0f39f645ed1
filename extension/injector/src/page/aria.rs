//! Roles, accessible names and states of elements, as a person using assistive technology meets
//! them: explicit `role` first, then the implicit role of the tag (HTML-AAM, the common cases),
//! the name by the accessible-name computation's usual sources, and the states a snapshot shows.

use super::{Kid, PageDom, Shown};

/// Roles whose elements get a ref: what a person acts on (and the items and rows they hover to
/// reveal an item's own buttons).
const ACTIONABLE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "treeitem",
    "listitem",
    "row",
    "gridcell",
    "summary",
];

/// Roles named by their content when nothing else names them.
const NAMED_BY_CONTENT: &[&str] = &[
    "button",
    "link",
    "heading",
    "option",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "treeitem",
    "checkbox",
    "radio",
    "switch",
    "cell",
    "gridcell",
    "columnheader",
    "rowheader",
    "summary",
    "tooltip",
];

/// Whether `word` begins a snapshot line of an element (a role, or a heading's `h1`…`h6`).
pub fn is_role_word(word: &str) -> bool {
    const OTHER_ROLES: &[&str] = &[
        "heading",
        "list",
        "navigation",
        "main",
        "complementary",
        "banner",
        "contentinfo",
        "form",
        "region",
        "article",
        "dialog",
        "table",
        "cell",
        "columnheader",
        "rowheader",
        "img",
        "group",
        "progressbar",
        "meter",
        "iframe",
        "tablist",
        "tabpanel",
        "menu",
        "menubar",
        "tree",
        "grid",
        "alert",
        "status",
        "log",
        "toolbar",
        "search",
        "paragraph",
        "blockquote",
    ];
    let word = word.trim_end_matches(':');
    ACTIONABLE.contains(&word)
        || OTHER_ROLES.contains(&word)
        || (word.len() == 2
            && word.starts_with('h')
            && word[1..].parse::<u8>().is_ok_and(|l| (1..=6).contains(&l)))
}

/// Roles that are only structure: no line of their own, their content is their parent's.
pub fn is_structural(role: &str) -> bool {
    matches!(role, "" | "generic" | "none" | "presentation")
}

pub fn is_actionable(role: &str) -> bool {
    ACTIONABLE.contains(&role)
}

/// Something a person drags (HTML5 `draggable="true"`, an ARIA grab state, a named SVG group of
/// a canvas-like editor) or drops on (an ARIA drop effect): it gets a ref, for `page_act`'s `drag`.
pub fn is_draggable<D: PageDom>(dom: &D, node: &D::Node) -> bool {
    dom.attr(node, "draggable").as_deref() == Some("true")
        || dom.attr(node, "aria-grabbed").is_some()
        || is_drop_target(dom, node)
        || (dom.tag_name(node) == "g"
            && (dom.attr(node, "aria-label").is_some()
                || dom.attr(node, "aria-labelledby").is_some()))
}

/// A list a drag can end in, which no drop effect marks: one whose items are dragged (an item
/// `draggable="true"` or with an ARIA grab state: a sortable list), or one its author named
/// (`aria-label`/`aria-labelledby`: a board's column, named for people to tell it apart). Drop
/// handlers leave no mark in the DOM, and SortableJS marks an item draggable only once it is
/// pressed, so a plain column of a board is known only by its name. It gets a ref, for
/// `page_act`'s `drag` to end in it (an empty column has no item to drop onto); unnamed lists
/// of items that are not dragged (TodoMVC's) get none.
pub fn is_drop_list<D: PageDom>(dom: &D, node: &D::Node, role: &str) -> bool {
    /// Items looked at for a drag signal (a sortable list's items are alike).
    const ITEMS_LOOKED_AT: usize = 8;
    if role != "list" {
        return false;
    }
    let named = ["aria-label", "aria-labelledby"]
        .iter()
        .any(|name| dom.attr(node, name).is_some_and(|v| !v.trim().is_empty()));
    named
        || dom
            .kids(node)
            .into_iter()
            .filter_map(|kid| match kid {
                Kid::Element(item) => Some(item),
                Kid::Text(_) => None,
            })
            .take(ITEMS_LOOKED_AT)
            .any(|item| {
                dom.attr(&item, "draggable").as_deref() == Some("true")
                    || dom.attr(&item, "aria-grabbed").is_some()
            })
}

/// An element whose ARIA drop effect says it takes drops.
fn is_drop_target<D: PageDom>(dom: &D, node: &D::Node) -> bool {
    dom.attr(node, "aria-dropeffect")
        .is_some_and(|effect| effect != "none")
}

pub fn named_by_content(role: &str) -> bool {
    NAMED_BY_CONTENT.contains(&role)
}

/// Tags that never show anything.
pub fn is_unrendered_tag(tag: &str) -> bool {
    matches!(
        tag,
        "script" | "style" | "noscript" | "template" | "head" | "meta" | "link" | "title" | "base"
    )
}

/// Inline tags: their text joins the surrounding text on one line.
pub fn is_inline_tag(tag: &str) -> bool {
    matches!(
        tag,
        "span"
            | "b"
            | "i"
            | "em"
            | "strong"
            | "code"
            | "small"
            | "abbr"
            | "sub"
            | "sup"
            | "mark"
            | "u"
            | "s"
            | "time"
            | "font"
            | "bdi"
            | "bdo"
            | "q"
            | "cite"
            | "kbd"
            | "var"
            | "label"
            | "a"
            | "data"
            | "del"
            | "ins"
            | "dfn"
            | "samp"
            | "wbr"
            | "br"
    )
}

/// The element's role: its `role` attribute's first token, else the tag's implicit role (`""`:
/// none).
pub fn role<D: PageDom>(dom: &D, node: &D::Node) -> String {
    if let Some(explicit) = dom.attr(node, "role")
        && let Some(first) = explicit.split_whitespace().next()
    {
        return first.to_ascii_lowercase();
    }
    let tag = dom.tag_name(node);
    let has = |name: &str| dom.attr(node, name).is_some();
    let role = match tag.as_str() {
        "a" | "area" if has("href") => "link",
        "button" => "button",
        "input" => match dom
            .attr(node, "type")
            .unwrap_or_default()
            .to_ascii_lowercase()
            .as_str()
        {
            "checkbox" => "checkbox",
            "radio" => "radio",
            "range" => "slider",
            "number" => "spinbutton",
            "search" => "searchbox",
            // As Chrome's accessibility tree has it: a file input is its "Choose file" button.
            "button" | "submit" | "reset" | "image" | "file" => "button",
            "hidden" | "color" => "",
            _ => "textbox",
        },
        "textarea" => "textbox",
        "select" => {
            let size = dom.attr(node, "size").and_then(|s| s.parse::<u32>().ok());
            if has("multiple") || size.is_some_and(|s| s > 1) {
                "listbox"
            } else {
                "combobox"
            }
        }
        "option" => "option",
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => "heading",
        "ul" | "ol" | "menu" => "list",
        "li" => "listitem",
        "nav" => "navigation",
        "main" => "main",
        "aside" => "complementary",
        "header" if !in_sectioning(dom, node) => "banner",
        "footer" if !in_sectioning(dom, node) => "contentinfo",
        "form" => "form",
        "section" if has("aria-label") || has("aria-labelledby") => "region",
        "article" => "article",
        "dialog" => "dialog",
        "table" => "table",
        "tr" => "row",
        "td" => "cell",
        "th" => "columnheader",
        "img" => match dom.attr(node, "alt") {
            Some(alt) if alt.is_empty() => "",
            _ => "img",
        },
        "fieldset" => "group",
        "progress" => "progressbar",
        "meter" => "meter",
        "hr" => "separator",
        "summary" => "summary",
        "iframe" => "iframe",
        // A named group of an SVG drawing (a node of a flow editor's canvas).
        "g" if has("aria-label") || has("aria-labelledby") => "group",
        _ if dom
            .attr(node, "contenteditable")
            .is_some_and(|v| v != "false") =>
        {
            "textbox"
        }
        // Where a person drops (a column of a board), and what they drag that nothing else names
        // (a card of a board, a palette item).
        _ if is_drop_target(dom, node) => "group",
        _ if is_draggable(dom, node) => "draggable",
        _ => "",
    };
    role.to_owned()
}

/// Whether a `header`/`footer` sits inside sectioning content (then it is no landmark).
fn in_sectioning<D: PageDom>(dom: &D, node: &D::Node) -> bool {
    let mut at = dom.parent(node);
    while let Some(p) = at {
        if matches!(
            dom.tag_name(&p).as_str(),
            "article" | "aside" | "main" | "nav" | "section"
        ) {
            return true;
        }
        at = dom.parent(&p);
    }
    false
}

/// Collapses runs of whitespace to one space and trims.
pub fn squash(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The element's accessible name (squashed; empty when it has none).
pub fn name<D: PageDom>(dom: &D, node: &D::Node, role: &str) -> String {
    if let Some(ids) = dom.attr(node, "aria-labelledby") {
        let named: Vec<String> = ids
            .split_whitespace()
            .filter_map(|id| dom.by_id(node, id))
            .map(|label| squash(&text_of(dom, &label)))
            .filter(|t| !t.is_empty())
            .collect();
        if !named.is_empty() {
            return named.join(" ");
        }
    }
    if let Some(label) = dom.attr(node, "aria-label").map(|l| squash(&l))
        && !label.is_empty()
    {
        return label;
    }
    let tag = dom.tag_name(node);
    if matches!(
        tag.as_str(),
        "input" | "textarea" | "select" | "meter" | "progress"
    ) {
        let labelled: Vec<String> = dom
            .labels(node)
            .iter()
            .map(|label| squash(&text_of(dom, label)))
            .filter(|t| !t.is_empty())
            .collect();
        if !labelled.is_empty() {
            return labelled.join(" ");
        }
        if matches!(
            dom.attr(node, "type").as_deref(),
            Some("submit" | "button" | "reset")
        ) && let Some(value) = dom.value(node).map(|v| squash(&v))
            && !value.is_empty()
        {
            return value;
        }
    }
    if (matches!(tag.as_str(), "img" | "area")
        || dom.attr(node, "type").as_deref() == Some("image"))
        && let Some(alt) = dom.attr(node, "alt").map(|a| squash(&a))
        && !alt.is_empty()
    {
        return alt;
    }
    if named_by_content(role) {
        let text = squash(&text_of(dom, node));
        if !text.is_empty() {
            return text;
        }
    }
    if let Some(title) = dom.attr(node, "title").map(|t| squash(&t))
        && !title.is_empty()
    {
        return title;
    }
    dom.attr(node, "placeholder")
        .map(|p| squash(&p))
        .unwrap_or_default()
}

/// The text a person sees inside `node` (hidden parts left out), with the alt text of images.
pub fn text_of<D: PageDom>(dom: &D, node: &D::Node) -> String {
    let mut out = String::new();
    collect_text(dom, node, &mut out, 0);
    out
}

fn collect_text<D: PageDom>(dom: &D, node: &D::Node, out: &mut String, depth: usize) {
    if depth > 64 {
        return;
    }
    for kid in dom.kids(node) {
        match kid {
            Kid::Text(text) => out.push_str(&text),
            Kid::Element(el) => {
                let tag = dom.tag_name(&el);
                if is_unrendered_tag(&tag)
                    || dom.shown(&el) == Shown::No
                    || dom.attr(&el, "aria-hidden").as_deref() == Some("true")
                {
                    continue;
                }
                if tag == "img" {
                    if let Some(alt) = dom.attr(&el, "alt") {
                        out.push_str(&alt);
                    }
                    continue;
                }
                if !is_inline_tag(&tag) {
                    out.push(' ');
                }
                collect_text(dom, &el, out, depth + 1);
                if !is_inline_tag(&tag) {
                    out.push(' ');
                }
            }
        }
    }
}

/// The states a snapshot shows after the name: `checked`, `disabled`, `expanded`, … and a
/// field's current value.
/// Whether `node` is an `<input type=file>`.
pub fn is_file_input<D: crate::dom::Dom>(dom: &D, node: &D::Node) -> bool {
    dom.tag_name(node) == "input"
        && dom
            .attr(node, "type")
            .is_some_and(|t| t.eq_ignore_ascii_case("file"))
}

pub fn states<D: PageDom>(dom: &D, node: &D::Node, role: &str) -> Vec<String> {
    let mut out = Vec::new();
    let aria = |name: &str| dom.attr(node, name);
    match role {
        "checkbox" | "radio" | "switch" | "menuitemcheckbox" | "menuitemradio" => {
            let checked = match aria("aria-checked").as_deref() {
                Some("true") => Some("checked"),
                Some("mixed") => Some("mixed"),
                Some(_) => None,
                None => dom
                    .prop(node, "checked")
                    .as_bool()
                    .and_then(|c| c.then_some("checked")),
            };
            out.extend(checked.map(str::to_owned));
        }
        "textbox" | "searchbox" | "spinbutton" | "slider" | "combobox" => {
            let value = match dom.options(node) {
                Some(options) => dom
                    .prop(node, "selectedIndex")
                    .as_u64()
                    .and_then(|i| options.get(i as usize).map(|(_, text)| text.clone())),
                None => dom.value(node).or_else(|| {
                    (dom.attr(node, "contenteditable").is_some()).then(|| squash(&dom.text(node)))
                }),
            };
            if let Some(value) = value.filter(|v| !v.is_empty()) {
                let shown = if dom.attr(node, "type").as_deref() == Some("password") {
                    "••••".to_owned()
                } else if dom.tag_name(node) == "textarea" {
                    // Its lines and indentation kept (quoted, `\n` escaped); when cut, the
                    // snapshot says how much more there is.
                    multiline(&value)
                } else {
                    truncate(&squash(&value), 80)
                };
                out.push(format!("={}", quote(&shown)));
            }
        }
        "button" if is_file_input(dom, node) => {
            // What tells a model it can `upload` here, and how many files it takes.
            out.push("file".into());
            if dom.attr(node, "multiple").is_some() {
                out.push("multiple".into());
            }
        }
        _ => {}
    }
    if dom.is_disabled(node) {
        out.push("disabled".into());
    }
    for (attr, yes, no) in [
        ("aria-expanded", "expanded", Some("collapsed")),
        ("aria-selected", "selected", None),
        ("aria-pressed", "pressed", None),
        ("aria-current", "current", None),
        ("aria-invalid", "invalid", None),
    ] {
        match aria(attr).as_deref() {
            Some("false") | None => {
                if let (Some(no), Some("false")) = (no, aria(attr).as_deref()) {
                    out.push(no.into());
                }
            }
            Some(_) => out.push(yes.into()),
        }
    }
    match aria("aria-grabbed").as_deref() {
        Some("true") => out.push("grabbed".into()),
        Some("false") => out.push("grabbable".into()),
        _ => {}
    }
    if aria("aria-dropeffect").is_some_and(|e| e != "none") {
        out.push("drop target".into());
    }
    if role == "option" && dom.prop(node, "selected").as_bool() == Some(true) {
        out.push("selected".into());
    }
    if dom.attr(node, "required").is_some() || aria("aria-required").as_deref() == Some("true") {
        out.push("required".into());
    }
    if dom.attr(node, "readonly").is_some() && matches!(role, "textbox" | "searchbox") {
        out.push("readonly".into());
    }
    if dom.has_focus(node) {
        out.push("focused".into());
    }
    out
}

/// Characters of a textarea's value a snapshot shows at most.
const MAX_MULTILINE: usize = 300;

/// A multi-line value as a snapshot shows it: whole up to [`MAX_MULTILINE`] characters, else
/// cut with how many more there are (`page_read` of its ref gives all of it).
fn multiline(value: &str) -> String {
    let value = value.replace("\r\n", "\n");
    let total = value.chars().count();
    match value.char_indices().nth(MAX_MULTILINE) {
        Some((cut, _)) => format!(
            "{}… (+{} characters; page_read its ref for all)",
            &value[..cut],
            total - MAX_MULTILINE
        ),
        None => value,
    }
}

/// A heading's level (`h3` → 3, `aria-level`).
pub fn heading_level<D: PageDom>(dom: &D, node: &D::Node) -> u32 {
    dom.attr(node, "aria-level")
        .and_then(|l| l.parse().ok())
        .or_else(|| {
            dom.tag_name(node)
                .strip_prefix('h')
                .and_then(|l| l.parse().ok())
        })
        .unwrap_or(2)
}

/// `text` cut to at most `max` characters, with an ellipsis when cut.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A name or text as a snapshot writes it: in double quotes, with quotes and line breaks escaped.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
