//! `page_read`: the visible text of the page or of one element, as plain text or as markdown
//! (headings, list items, links with their URL, images' alt text), within a length budget that
//! a cursor pages through.

use bridge::page_ops::ReadFormat;

use super::aria::{self, squash};
use super::{Kid, PageDom, Shown};

/// The text of `root` from character `cursor` on, at most about `max_chars` of it.
pub fn page<D: PageDom>(
    dom: &D,
    root: &D::Node,
    format: ReadFormat,
    max_chars: usize,
    cursor: usize,
) -> String {
    let mut out = Text {
        format,
        blocks: Vec::new(),
        line: String::new(),
        prefix: String::new(),
    };
    out.walk(dom, root, 0);
    out.end_block();
    let text = out.blocks.join(match format {
        ReadFormat::Text => "\n",
        ReadFormat::Markdown => "\n\n",
    });
    let chars: Vec<char> = text.chars().collect();
    if cursor >= chars.len() {
        return if cursor == 0 {
            "(no visible text)\n".to_owned()
        } else {
            "(nothing more)\n".to_owned()
        };
    }
    let end = (cursor + max_chars).min(chars.len());
    let mut page: String = chars[cursor..end].iter().collect();
    page.push('\n');
    if end < chars.len() {
        page.push_str(&format!(
            "… {} more characters: call again with cursor={end}\n",
            chars.len() - end
        ));
    }
    page
}

struct Text {
    format: ReadFormat,
    blocks: Vec<String>,
    line: String,
    /// A heading's or list item's marker, for its first block of text.
    prefix: String,
}

impl Text {
    fn end_block(&mut self) {
        let line = squash(&self.line);
        self.line.clear();
        if !line.is_empty() {
            self.blocks.push(std::mem::take(&mut self.prefix) + &line);
        }
    }

    fn walk<D: PageDom>(&mut self, dom: &D, node: &D::Node, depth: usize) {
        if depth > 256 {
            return;
        }
        let tag = dom.tag_name(node);
        if aria::is_unrendered_tag(&tag) || dom.attr(node, "aria-hidden").as_deref() == Some("true")
        {
            return;
        }
        let shown = dom.shown(node);
        if shown == Shown::No {
            return;
        }
        let markdown = self.format == ReadFormat::Markdown;
        let block = !aria::is_inline_tag(&tag);
        if block {
            self.end_block();
        }
        if markdown {
            match tag.as_str() {
                "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                    let level = aria::heading_level(dom, node) as usize;
                    self.prefix = format!("{} ", "#".repeat(level.min(6)));
                }
                "li" => self.prefix = "- ".to_owned(),
                "img" => {
                    if let Some(alt) = dom.attr(node, "alt").filter(|a| !a.is_empty()) {
                        self.line.push_str(&format!("![{alt}]"));
                    }
                }
                _ => {}
            }
        }
        let link = (markdown && tag == "a")
            .then(|| dom.attr(node, "href"))
            .flatten()
            .filter(|href| !href.starts_with("javascript:"));
        if link.is_some() {
            self.line.push('[');
        }
        if let Some(value) = dom
            .value(node)
            .filter(|_| matches!(tag.as_str(), "input" | "textarea"))
            && !value.is_empty()
            && dom.attr(node, "type").as_deref() != Some("password")
        {
            if tag == "textarea" {
                // A textarea's lines and indentation are its content: a block of its own, kept
                // as it is, so a model can copy it back.
                self.end_block();
                self.blocks.push(value.replace("\r\n", "\n"));
            } else {
                self.line.push_str(&format!(" {value} "));
            }
        }
        for kid in dom.kids(node) {
            match kid {
                Kid::Text(text) if shown == Shown::Yes => self.line.push_str(&text),
                Kid::Text(_) => {}
                Kid::Element(el) => {
                    if dom.tag_name(&el) == "br" {
                        self.end_block();
                    } else {
                        self.walk(dom, &el, depth + 1);
                    }
                }
            }
        }
        if let Some(href) = link {
            self.line.push_str(&format!("]({href})"));
        }
        if block {
            self.end_block();
        }
    }
}
