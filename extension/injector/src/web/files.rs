//! The browser side of uploads (`steps/files.rs` decides): the call's files made into `File`s
//! from the bytes the server sent, in a `DataTransfer` that is set on a file input or carried by
//! drag events.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bridge::upload::UploadFile;
use wasm_bindgen::JsCast;
use web_sys::{
    DataTransfer, DragEvent, DragEventInit, Element, Event, EventInit, File, FilePropertyBag,
    HtmlInputElement,
};

use super::basics::reason;

/// A `DataTransfer` holding `files`, as the file picker or a drag from the desktop gives them.
fn data_transfer(files: &[&UploadFile]) -> Result<DataTransfer, String> {
    let transfer = DataTransfer::new().map_err(reason)?;
    for file in files {
        let bytes = STANDARD
            .decode(&file.data)
            .map_err(|e| format!("the bytes of {:?} came damaged: {e}", file.name))?;
        let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes.as_slice()));
        let options = FilePropertyBag::new();
        options.set_type(&file.mime);
        let made = File::new_with_u8_array_sequence_and_options(&parts, file.file_name(), &options)
            .map_err(reason)?;
        transfer.items().add_with_file(&made).map_err(reason)?;
    }
    Ok(transfer)
}

/// Sets the files of file input `node`, then fires `input` and `change` as Chrome does after a
/// choice in its file picker; answers how many files the input held once set.
pub fn set_input_files(node: &Element, files: &[&UploadFile]) -> Result<usize, String> {
    let transfer = data_transfer(files)?;
    // Unchecked: an element of a same-origin frame is not an `instanceof` this realm's class.
    let input: &HtmlInputElement = node.unchecked_ref();
    input.set_files(transfer.files().as_ref());
    let held = input.files().map_or(0, |list| list.length() as usize);
    for (kind, composed) in [("input", true), ("change", false)] {
        let init = EventInit::new();
        init.set_bubbles(true);
        init.set_composed(composed);
        let event = Event::new_with_event_init_dict(kind, &init).map_err(reason)?;
        node.dispatch_event(&event).map_err(reason)?;
    }
    Ok(held)
}

/// A drop of `files` on `node` at its centre: `dragenter`, `dragover`, then `drop` when the page
/// cancelled `dragover` (as Chrome drops only where the page said it takes the drop), else
/// `dragleave`. Answers whether the page took the drop.
pub fn drop_files(node: &Element, files: &[&UploadFile]) -> Result<bool, String> {
    let transfer = data_transfer(files)?;
    let rect = node.get_bounding_client_rect();
    let (x, y) = (
        (rect.left() + rect.width() / 2.0).round() as i32,
        (rect.top() + rect.height() / 2.0).round() as i32,
    );
    let fire = |kind: &str| -> Result<bool, String> {
        let init = DragEventInit::new();
        init.set_bubbles(true);
        init.set_cancelable(kind != "dragleave");
        init.set_composed(true);
        init.set_client_x(x);
        init.set_client_y(y);
        init.set_data_transfer(Some(&transfer));
        let event = DragEvent::new_with_event_init_dict(kind, &init).map_err(reason)?;
        node.dispatch_event(&event).map_err(reason)
    };
    fire("dragenter")?;
    if fire("dragover")? {
        fire("dragleave")?;
        return Ok(false);
    }
    fire("drop")?;
    Ok(true)
}
