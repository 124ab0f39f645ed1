//! The snapshot: what a person sees, one element a line, indented by nesting. Structure without
//! meaning (generic `div`s and `span`s) has no line; its text joins its neighbours' on one line.
//! A line is `role ref "name" states`, the ref (`e12`) only on what a person acts on; a heading
//! is `h2 "name"`; text is written as it is (quoted only where it could be read as an element's
//! line), long text cut (page_read reads it whole); an element whose only content is one text has
//! it after a colon. Every token counts: this is what a model reads before each step.

use bridge::page_ops::ref_name;

use super::aria::{self, quote, squash, truncate};
use super::{ChildFrame, Kid, PageDom, Refs, Shown};

/// One line of a snapshot: its nesting depth and its text (without indentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub depth: usize,
    pub text: String,
    /// A line of the page's text (not an element's).
    pub is_text: bool,
    /// The other origin's frame this `iframe` line stands for: its content is spliced in under
    /// it ([`super::frames`]).
    pub frame: Option<ChildFrame>,
}

/// Longest text line and name, in characters.
const MAX_TEXT: usize = 100;
const MAX_NAME: usize = 120;
/// Options of a `<select>` listed on its line at most.
const MAX_OPTIONS: usize = 12;
/// Deeper than this the page is not walked (a pathological page must not hang the call).
const MAX_DEPTH: usize = 256;

/// The snapshot's lines of `root` and everything shown inside it; elements a person acts on get
/// a ref in `refs` (kept while the element lives).
pub fn lines<D: PageDom>(dom: &D, root: &D::Node, refs: &mut Refs<D::Node>) -> Vec<Line> {
    let mut walk = Walk {
        dom,
        refs,
        lines: Vec::new(),
        pending: String::new(),
        pending_depth: 0,
    };
    walk.element(root, 0, 0);
    walk.flush();
    walk.lines
}

struct Walk<'a, D: PageDom> {
    dom: &'a D,
    refs: &'a mut Refs<D::Node>,
    lines: Vec<Line>,
    /// Text not yet written: the text of neighbouring inline content, one line once flushed.
    pending: String,
    pending_depth: usize,
}

impl<D: PageDom> Walk<'_, D> {
    fn flush(&mut self) {
        let text = squash(&self.pending);
        self.pending.clear();
        // Punctuation alone (a full stop after a link) tells nothing; other short text without
        // letters or digits is often the page's state (`[ ]:`, `[*]:`, `✓`, `•••`): kept.
        if !text.chars().all(is_punctuation) {
            self.lines.push(Line {
                depth: self.pending_depth,
                text: as_text(&truncate(&text, MAX_TEXT)),
                is_text: true,
                frame: None,
            });
        }
    }

    fn text(&mut self, text: &str, depth: usize) {
        if self.pending.trim().is_empty() {
            self.pending_depth = depth;
        }
        self.pending.push_str(text);
    }

    fn kids(&mut self, node: &D::Node, depth: usize, nesting: usize, invisible: bool) {
        for kid in self.dom.kids(node) {
            match kid {
                Kid::Text(text) if !invisible => self.text(&text, depth),
                Kid::Text(_) => {}
                Kid::Element(el) => self.element(&el, depth, nesting + 1),
            }
        }
    }

    fn element(&mut self, node: &D::Node, depth: usize, nesting: usize) {
        let dom = self.dom;
        let tag = dom.tag_name(node);
        if nesting > MAX_DEPTH
            || aria::is_unrendered_tag(&tag)
            || dom.attr(node, "aria-hidden").as_deref() == Some("true")
            || dom.attr(node, "inert").is_some()
        {
            return;
        }
        let role = aria::role(dom, node);
        let shown = dom.shown(node);
        if shown == Shown::No {
            // A hidden control in a shown container: often one its item shows on hover (TodoMVC's
            // delete button), which a person sees by pointing at the item; acting on it does that.
            if matches!(role.as_str(), "button" | "link")
                && dom
                    .parent(node)
                    .is_some_and(|p| dom.shown(&p) == Shown::Yes)
            {
                self.flush();
                let name = aria::name(dom, node, &role);
                let line = self.line(node, &role, &name, "hidden");
                self.lines.push(Line {
                    depth,
                    text: line,
                    is_text: false,
                    frame: None,
                });
            }
            return;
        }
        if tag == "br" {
            self.pending.push('\n');
            return;
        }
        let invisible = shown == Shown::Invisible;
        if invisible || aria::is_structural(&role) {
            let block = !aria::is_inline_tag(&tag);
            if block {
                self.flush();
            }
            self.kids(node, depth, nesting, invisible);
            if block {
                self.flush();
            }
            return;
        }
        self.flush();
        if role == "separator" {
            return;
        }
        // Once per element: a name from its content walks its whole subtree.
        let name = aria::name(dom, node, &role);
        let line = self.line(node, &role, &name, "");
        let at = self.lines.len();
        self.lines.push(Line {
            depth,
            text: line,
            is_text: false,
            frame: (role == "iframe").then(|| dom.child_frame(node)).flatten(),
        });
        // Fields show their value on their line (a `<select>` its options too; an ARIA listbox
        // has them inside); a control named by its content has said it.
        let leaf = matches!(
            role.as_str(),
            "textbox" | "searchbox" | "slider" | "spinbutton" | "img" | "progressbar" | "meter"
        ) || dom.options(node).is_some()
            || (aria::named_by_content(&role)
                && !name.is_empty()
                && squash(&aria::text_of(dom, node)) == name
                && !self.has_actionable_inside(node));
        if leaf {
            return;
        }
        self.kids(node, depth + 1, nesting, false);
        self.flush();
        // One text inside and nothing else: on the element's own line.
        if self.lines.len() == at + 2 && self.lines[at + 1].is_text {
            let text = self.lines.pop().expect("checked").text;
            self.lines[at].text.push_str(": ");
            self.lines[at].text.push_str(&text);
        }
    }

    fn has_actionable_inside(&self, node: &D::Node) -> bool {
        self.dom.kids(node).into_iter().any(|kid| match kid {
            Kid::Text(_) => false,
            Kid::Element(el) => {
                aria::is_actionable(&aria::role(self.dom, &el)) || self.has_actionable_inside(&el)
            }
        })
    }

    /// The element's line: role, ref, `name` (its accessible name), states (and `extra`).
    fn line(&mut self, node: &D::Node, role: &str, name: &str, extra: &str) -> String {
        let dom = self.dom;
        let mut line = if role == "heading" {
            format!("h{}", aria::heading_level(dom, node))
        } else {
            role.to_owned()
        };
        if aria::is_actionable(role)
            || aria::is_draggable(dom, node)
            || aria::is_drop_list(dom, node, role)
        {
            let r = self.refs.ref_for(dom, node);
            line.push(' ');
            line.push_str(&ref_name(r));
        }
        if !name.is_empty() {
            line.push(' ');
            line.push_str(&quote(&truncate(name, MAX_NAME)));
        } else if matches!(role, "button" | "link" | "menuitem" | "tab" | "textbox")
            && let Some(hint) = hint(dom, node)
        {
            // Nameless controls (icon buttons) are told apart by what their author called them.
            line.push(' ');
            line.push_str(&hint);
        }
        for state in aria::states(dom, node, role) {
            line.push(' ');
            line.push_str(&state);
        }
        if let Some(options) = dom.options(node) {
            let texts: Vec<String> = options
                .iter()
                .take(MAX_OPTIONS)
                .map(|(_, text)| truncate(text, 40))
                .collect();
            line.push_str(" options: ");
            line.push_str(&texts.join("|"));
            if options.len() > MAX_OPTIONS {
                line.push_str(&format!("|…(+{})", options.len() - MAX_OPTIONS));
            }
        }
        if !extra.is_empty() {
            line.push(' ');
            line.push_str(extra);
        }
        line
    }
}

/// A text line: as it is, or quoted when it could be read as an element's line (it starts with a
/// role, a ref, a quote or a diff's sign).
fn as_text(text: &str) -> String {
    let first = text.split_whitespace().next().unwrap_or("");
    let ambiguous = first.starts_with(['"', '+', '-', '…'])
        || aria::is_role_word(first)
        || bridge::page_ops::parse_ref(first.trim_end_matches(':')).is_some();
    if ambiguous {
        quote(text)
    } else {
        text.to_owned()
    }
}

/// `#id` or `.class` of a nameless control, when its author gave it one.
fn hint<D: PageDom>(dom: &D, node: &D::Node) -> Option<String> {
    if let Some(class) = dom.attr(node, "class")
        && let Some(first) = class.split_whitespace().next()
    {
        return Some(format!(".{}", truncate(first, 30)));
    }
    dom.attr(node, "id")
        .filter(|id| !id.is_empty())
        .map(|id| format!("#{}", truncate(&id, 30)))
}

/// The lines from `cursor` on, as text of at most about `max_chars`, and where the next page of
/// lines starts when they did not all fit.
pub fn render(lines: &[Line], max_chars: usize, cursor: usize) -> (String, Option<usize>) {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate().skip(cursor) {
        let width = line.depth + line.text.len() + 1;
        if !out.is_empty() && out.len() + width > max_chars {
            out.push_str(&format!(
                "… {} more lines: call again with cursor={i}\n",
                lines.len() - i
            ));
            return (out, Some(i));
        }
        out.extend(std::iter::repeat_n(' ', line.depth));
        out.push_str(&line.text);
        out.push('\n');
    }
    (out, None)
}

/// Sentence punctuation and separators, which tell nothing alone.
fn is_punctuation(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '.' | ','
                | ';'
                | ':'
                | '!'
                | '?'
                | '-'
                | '–'
                | '—'
                | '|'
                | '/'
                | '('
                | ')'
                | '\''
                | '"'
                | '·'
                | '…'
        )
}
