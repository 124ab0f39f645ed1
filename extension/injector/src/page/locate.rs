//! Finding the elements a [`Locator`] names (`bridge::locator`): CSS and the attribute locators
//! through the browser's own selector engine; role and name, label and text by the same role and
//! accessible-name rules the snapshot shows, so a step written from a snapshot finds what it showed.
//! And the other way: the most robust locator for an element a snapshot showed.

use bridge::locator::Locator;

use super::{PageDom, aria};

/// The elements `locator` names inside `scope` (the document when `None`), in document order;
/// `Err` carries the browser's reason for a CSS selector it refuses.
pub fn query_all<D: PageDom>(
    dom: &D,
    scope: Option<&D::Node>,
    locator: &Locator,
) -> Result<Vec<D::Node>, String> {
    let css = match locator {
        Locator::Css(css) => return dom.query_all(scope, css),
        Locator::Placeholder(_) | Locator::TestId(_) => locator.as_css(),
        Locator::Role { .. } | Locator::Label(_) | Locator::Text(_) => None,
    };
    if let Some(css) = css {
        return dom.query_all(scope, &css);
    }
    let all = dom.query_all(scope, "*")?;
    let squashed = |text: &str| aria::squash(text);
    Ok(match locator {
        Locator::Role { role, name } => all
            .into_iter()
            .filter(|node| {
                let got = aria::role(dom, node);
                got == *role
                    && name
                        .as_ref()
                        .is_none_or(|wanted| aria::name(dom, node, &got) == squashed(wanted))
            })
            .collect(),
        Locator::Label(label) => {
            let wanted = squashed(label);
            all.into_iter()
                .filter(|node| {
                    let role = aria::role(dom, node);
                    (is_field(&role) || aria::is_file_input(dom, node))
                        && aria::name(dom, node, &role) == wanted
                })
                .collect()
        }
        Locator::Text(text) => {
            let wanted = squashed(text);
            let matching: Vec<D::Node> = all
                .into_iter()
                .filter(|node| squashed(&aria::text_of(dom, node)) == wanted)
                .collect();
            // The innermost: a list item whose only text is a link's is found as the link.
            matching
                .iter()
                .filter(|node| {
                    !matching
                        .iter()
                        .any(|other| !dom.same(node, other) && dom.contains(node, other))
                })
                .cloned()
                .collect()
        }
        Locator::Css(_) | Locator::Placeholder(_) | Locator::TestId(_) => {
            unreachable!("answered by CSS above")
        }
    })
}

/// Roles of the fields a `<label>` names.
fn is_field(role: &str) -> bool {
    matches!(
        role,
        "textbox"
            | "searchbox"
            | "combobox"
            | "listbox"
            | "checkbox"
            | "radio"
            | "switch"
            | "slider"
            | "spinbutton"
    )
}

/// The most robust locator that names `node` alone on the page: its test id, else its role and
/// name, its label, its placeholder, its text; else CSS by id; `None` when none is unique.
pub fn best<D: PageDom>(dom: &D, node: &D::Node) -> Option<Locator> {
    let role = aria::role(dom, node);
    let name = aria::name(dom, node, &role);
    let text = aria::squash(&aria::text_of(dom, node));
    let attr = |name: &str| dom.attr(node, name).filter(|v| !v.trim().is_empty());
    let candidates = [
        attr("data-testid").map(Locator::TestId),
        (!role.is_empty() && !aria::is_structural(&role) && !name.is_empty()).then(|| {
            Locator::Role {
                role: role.clone(),
                name: Some(name.clone()),
            }
        }),
        (is_field(&role) && !name.is_empty()).then(|| Locator::Label(name.clone())),
        attr("placeholder").map(Locator::Placeholder),
        (!text.is_empty() && text.len() <= 80).then_some(Locator::Text(text)),
        attr("id")
            .filter(|id| {
                id.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            })
            .filter(|id| !id.starts_with(|c: char| c.is_ascii_digit()))
            .map(|id| Locator::Css(format!("#{id}"))),
    ];
    candidates.into_iter().flatten().find(|locator| {
        matches!(query_all(dom, None, locator).as_deref(), Ok([only]) if dom.same(only, node))
    })
}
