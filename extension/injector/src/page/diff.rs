//! What an act changed: the snapshot's lines before and after, compared. The answer lists the
//! lines that went (`-`) and came (`+`), each with the line of its nearest enclosing element for
//! context, so a model sees what its act did without reading the page again. An element that
//! went with everything under it (a closed editor, a dialog) is one line saying how many lines
//! went with it: what came is listed whole, since its refs are the model's to use.

use super::snapshot::Line;

/// Changed lines listed at most; the rest is counted.
const MAX_CHANGED: usize = 40;
/// An element gone with at least this many lines under it is listed as one line.
const MIN_FOLDED: usize = 5;
/// Lines compared by a full table at most (beyond, the middle is reported as replaced).
const MAX_TABLE: usize = 4_000_000;

/// The change from `before` to `after` as text (empty: nothing visible changed).
pub fn diff(before: &[Line], after: &[Line]) -> String {
    let prefix = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let suffix = before[prefix..]
        .iter()
        .rev()
        .zip(after[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let old = &before[prefix..before.len() - suffix];
    let new = &after[prefix..after.len() - suffix];
    let mut changes: Vec<(char, &Line)> = Vec::new();
    if old.len().saturating_mul(new.len()) > MAX_TABLE {
        changes.extend(old.iter().map(|l| ('-', l)));
        changes.extend(new.iter().map(|l| ('+', l)));
    } else {
        // Longest common subsequence, table from the end.
        let (n, m) = (old.len(), new.len());
        let mut table = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                table[i * (m + 1) + j] = if old[i] == new[j] {
                    table[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    table[(i + 1) * (m + 1) + j].max(table[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && old[i] == new[j] {
                i += 1;
                j += 1;
            } else if i < n
                && (j == m || table[(i + 1) * (m + 1) + j] >= table[i * (m + 1) + j + 1])
            {
                changes.push(('-', &old[i]));
                i += 1;
            } else {
                changes.push(('+', &new[j]));
                j += 1;
            }
        }
    }
    let listed = fold_gone_subtrees(before, &changes);
    let mut out = String::new();
    let mut context_shown: Option<&Line> = None;
    for &(sign, line, under) in listed.iter().take(MAX_CHANGED) {
        // The enclosing element of the first change of a region, from the page after the act.
        let list = if sign == '+' { after } else { before };
        if let Some(parent) = enclosing(list, line)
            && context_shown != Some(parent)
            && !changes.iter().any(|(_, l)| std::ptr::eq(*l, parent))
        {
            out.push_str(&format!(" {}{}\n", " ".repeat(parent.depth), parent.text));
            context_shown = Some(parent);
        }
        out.push_str(&format!("{sign}{}{}", " ".repeat(line.depth), line.text));
        match under {
            0 => out.push('\n'),
            n => out.push_str(&format!(" (and the {n} lines under it)\n")),
        }
    }
    if listed.len() > MAX_CHANGED {
        out.push_str(&format!(
            "… {} more changed lines\n",
            listed.len() - MAX_CHANGED
        ));
    }
    out
}

/// The changes as listed: each with how many lines under it went with it, folded into it (a line
/// gone with its whole subtree in `before`, of at least [`MIN_FOLDED`] lines, all gone too).
fn fold_gone_subtrees<'a>(
    before: &[Line],
    changes: &[(char, &'a Line)],
) -> Vec<(char, &'a Line, usize)> {
    let mut listed = Vec::with_capacity(changes.len());
    let mut k = 0;
    while k < changes.len() {
        let (sign, line) = changes[k];
        let under = match (sign, index_in(before, line)) {
            ('-', Some(at)) => {
                let size = before[at + 1..]
                    .iter()
                    .take_while(|l| l.depth > line.depth)
                    .count();
                let rest = &changes[k + 1..];
                let all_gone = size >= MIN_FOLDED
                    && rest.len() >= size
                    && before[at + 1..=at + size]
                        .iter()
                        .zip(rest)
                        .all(|(l, (s, c))| *s == '-' && std::ptr::eq(l, *c));
                if all_gone { size } else { 0 }
            }
            _ => 0,
        };
        listed.push((sign, line, under));
        k += 1 + under;
    }
    listed
}

/// Where `line` (which `list` holds) is in `list`.
fn index_in(list: &[Line], line: &Line) -> Option<usize> {
    let offset = (line as *const Line)
        .addr()
        .checked_sub(list.as_ptr().addr())?;
    let at = offset / std::mem::size_of::<Line>();
    (at < list.len() && std::ptr::eq(&list[at], line)).then_some(at)
}

/// The nearest line before `line` (in `list`, which holds it) that is less indented.
fn enclosing<'a>(list: &'a [Line], line: &Line) -> Option<&'a Line> {
    let at = index_in(list, line)?;
    list[..at].iter().rev().find(|l| l.depth < line.depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(spec: &[(usize, &str)]) -> Vec<Line> {
        spec.iter()
            .map(|&(depth, text)| Line {
                depth,
                text: text.to_owned(),
                is_text: false,
                frame: None,
            })
            .collect()
    }

    fn editor(buttons: usize) -> Vec<(usize, String)> {
        let mut spec = vec![(0, "main".to_owned()), (1, "region \"Editor\"".to_owned())];
        spec.extend((0..buttons).map(|b| (2, format!("button e{b} \"Tool {b}\""))));
        spec.push((0, "contentinfo".to_owned()));
        spec
    }

    fn of(spec: &[(usize, String)]) -> Vec<Line> {
        lines(
            &spec
                .iter()
                .map(|(d, t)| (*d, t.as_str()))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn an_element_gone_with_everything_under_it_is_one_line_what_came_is_listed_whole() {
        let before = of(&editor(6));
        let after = lines(&[(0, "main"), (0, "contentinfo")]);
        assert_eq!(
            diff(&before, &after),
            " main\n- region \"Editor\" (and the 6 lines under it)\n"
        );
        // The other way round: every ref that came is shown.
        let came = diff(&after, &before);
        assert_eq!(
            came.lines().filter(|l| l.starts_with('+')).count(),
            7,
            "{came}"
        );
        // Under the fold's size, each line is listed.
        let small = diff(&of(&editor(4)), &after);
        assert_eq!(
            small.lines().filter(|l| l.starts_with('-')).count(),
            5,
            "{small}"
        );
    }

    #[test]
    fn an_element_whose_lines_under_it_partly_stay_is_not_folded() {
        let before = of(&editor(6));
        // Its line changed (it is still there, its children too, but one).
        let mut kept = editor(6);
        kept[1].1 = "region \"Editor\" busy".to_owned();
        kept.remove(3);
        let after = of(&kept);
        let said = diff(&before, &after);
        assert!(
            said.contains("- region \"Editor\"\n+ region \"Editor\" busy\n"),
            "{said}"
        );
        assert!(said.contains("-  button e1 \"Tool 1\"\n"), "{said}");
        assert!(!said.contains("lines under it"), "{said}");
    }

    #[test]
    fn a_folded_element_counts_as_one_changed_line() {
        let mut spec = editor(60);
        spec.insert(1, (1, "heading \"Draft\"".to_owned()));
        let before = of(&spec);
        let after = lines(&[(0, "main"), (0, "contentinfo")]);
        let said = diff(&before, &after);
        assert_eq!(said.lines().count(), 3, "{said}");
        assert!(!said.contains("more changed lines"), "{said}");
    }
}
