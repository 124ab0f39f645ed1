//! What an act changed: the snapshot's lines before and after, compared. The answer lists the
//! lines that went (`-`) and came (`+`), each with the line of its nearest enclosing element for
//! context, so a model sees what its act did without reading the page again.

use super::snapshot::Line;

/// Changed lines listed at most; the rest is counted.
const MAX_CHANGED: usize = 40;
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
    let mut out = String::new();
    let mut context_shown: Option<&Line> = None;
    for (sign, line) in changes.iter().take(MAX_CHANGED) {
        // The enclosing element of the first change of a region, from the page after the act.
        let list = if *sign == '+' { after } else { before };
        if let Some(parent) = enclosing(list, line)
            && context_shown != Some(parent)
            && !changes.iter().any(|(_, l)| std::ptr::eq(*l, parent))
        {
            out.push_str(&format!(" {}{}\n", " ".repeat(parent.depth), parent.text));
            context_shown = Some(parent);
        }
        out.push_str(&format!("{sign}{}{}\n", " ".repeat(line.depth), line.text));
    }
    if changes.len() > MAX_CHANGED {
        out.push_str(&format!(
            "… {} more changed lines\n",
            changes.len() - MAX_CHANGED
        ));
    }
    out
}

/// The nearest line before `line` (in `list`, which holds it) that is less indented.
fn enclosing<'a>(list: &'a [Line], line: &Line) -> Option<&'a Line> {
    let at = list.iter().position(|l| std::ptr::eq(l, line))?;
    list[..at].iter().rev().find(|l| l.depth < line.depth)
}
