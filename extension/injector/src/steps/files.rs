//! The `upload` step (and `page_act`'s `upload`): the call's files put on a file input as a choice
//! in the file picker does, or dropped on any other element as a person's drag from the desktop
//! does. The decisions are here, over the [`Dom`]; `web/files.rs` performs them in the page.

use bridge::ErrorCode;
use bridge::WireError;
use bridge::template::{self, Vars};
use bridge::upload::{self, UploadFile};
use serde_json::Value;

use super::{fail, refused};
use crate::dom::Dom;
use crate::input::Refusal;
use crate::page::aria::is_file_input;

/// The file names an `upload` step's `files` (`"{{argument}}"`) gives.
pub(super) fn names(vars: &Vars, files: &str, label: &str) -> Result<Vec<String>, WireError> {
    let name = template::sole_variable(files).ok_or_else(|| {
        fail(
            ErrorCode::AdapterError,
            label,
            format!("`files` must be one argument, such as \"{{{{files}}}}\", not {files:?}"),
        )
    })?;
    upload::names_in(vars.get(name).unwrap_or(&Value::Null))
        .map_err(|why| fail(ErrorCode::InvalidArgs, label, format!("`{name}`: {why}")))
}

/// Puts the call's files `names` on `node`: its file input (the element, or the one a `<label>`
/// is for), or else a drop on it. `who` names the element in errors.
pub(super) fn upload<D: Dom>(
    dom: &D,
    node: &D::Node,
    who: &str,
    names: &[String],
    label: &str,
) -> Result<(), WireError> {
    let carried = dom.call_files();
    let files = names
        .iter()
        .map(|name| {
            carried.iter().find(|f| &f.name == name).ok_or_else(|| {
                fail(
                    ErrorCode::Internal,
                    label,
                    format!("the call came without the file {name:?} (the server reads the files an upload names)"),
                )
            })
        })
        .collect::<Result<Vec<&UploadFile>, _>>()?;
    if !dom.is_connected(node) {
        return Err(refused(label, who, Refusal::Detached));
    }
    let input = match dom.tag_name(node).as_str() {
        "label" => dom.label_control(node).filter(|c| is_file_input(dom, c)),
        "input" if is_file_input(dom, node) => Some(node.clone()),
        "input" => {
            let kind = dom.attr(node, "type").unwrap_or_else(|| "text".into());
            return Err(fail(
                ErrorCode::NotActionable,
                label,
                format!(
                    "{who} is an <input type={kind}>, not a file input: name the <input type=file>, or the drop zone to drop the files on"
                ),
            ));
        }
        _ => None,
    };
    let Some(input) = input else {
        return match dom.drop_files(node, &files) {
            Ok(true) => Ok(()),
            Ok(false) => Err(refused(
                label,
                who,
                Refusal::NoEffect(
                    "did not take the dropped files: the page cancelled no `dragover` there (is it a drop zone? a file input takes them with the <input type=file> itself)".into(),
                ),
            )),
            Err(why) => Err(fail(ErrorCode::Internal, label, why)),
        };
    };
    if dom.is_disabled(&input) {
        return Err(refused(label, who, Refusal::Disabled));
    }
    if files.len() > 1 && dom.attr(&input, "multiple").is_none() {
        return Err(fail(
            ErrorCode::NotActionable,
            label,
            format!(
                "{who} takes one file (it has no `multiple` attribute), and the call gives {}",
                files.len()
            ),
        ));
    }
    let held = dom
        .set_input_files(&input, &files)
        .map_err(|why| fail(ErrorCode::Internal, label, why))?;
    if held != files.len() {
        return Err(refused(
            label,
            who,
            Refusal::NoEffect(format!(
                "holds {held} files after {} were put on it (the page changed them)",
                files.len()
            )),
        ));
    }
    Ok(())
}
