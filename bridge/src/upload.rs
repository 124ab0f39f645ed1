//! Files a call puts on the page (`upload` steps, `page_act`'s `upload`): what travels with the
//! call, server → worker → page, and the rules both ends share. The server alone reads files, and
//! only from the user's uploads directory; the page only ever gets the bytes it was sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most bytes of files one call may carry, all files together. Their base64 travels in the
/// call's frame, which [`crate::MAX_MESSAGE_BYTES`] (8 MiB) bounds: 5 MiB is 6.7 MiB of base64,
/// with room for the call's other fields.
pub const MAX_UPLOAD_BYTES: u64 = 5 * 1024 * 1024;

/// The most files one call may carry.
pub const MAX_UPLOAD_FILES: usize = 32;

/// One file as it travels with a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadFile {
    /// The name the call asked for, relative to the uploads directory (`docs/cv.pdf`): steps and
    /// page tools find the file by it.
    pub name: String,
    /// The MIME type guessed from the name's extension (`application/octet-stream` when unknown).
    pub mime: String,
    /// Its bytes, in standard base64 with padding.
    pub data: String,
}

impl UploadFile {
    /// The name the page sees (`File.name`): the last part of [`UploadFile::name`].
    pub fn file_name(&self) -> &str {
        self.name.rsplit(['/', '\\']).next().unwrap_or(&self.name)
    }
}

/// The file names a call's argument value gives: one name, or an array of names. The error says
/// what was wrong, for `INVALID_ARGS`.
pub fn names_in(value: &Value) -> Result<Vec<String>, String> {
    let names: Vec<String> = match value {
        Value::String(name) => vec![name.clone()],
        Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("a file name must be a string, not {item}"))
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "expected a file name or a list of them, not {other}"
            ));
        }
    };
    if names.is_empty() {
        return Err("expected at least one file name".into());
    }
    if names.len() > MAX_UPLOAD_FILES {
        return Err(format!(
            "{} files: one call puts at most {MAX_UPLOAD_FILES} on the page",
            names.len()
        ));
    }
    if let Some(empty) = names.iter().find(|n| n.trim().is_empty()) {
        return Err(format!("{empty:?} is not a file name"));
    }
    Ok(names)
}

/// The MIME type a browser gives a file of this name (by its extension, as Chrome's own table
/// does for the common types).
pub fn mime_for(name: &str) -> &'static str {
    let extension = match name.rsplit_once('.') {
        Some((_, ext)) if !ext.contains(['/', '\\']) => ext.to_ascii_lowercase(),
        _ => return "application/octet-stream",
    };
    match extension.as_str() {
        "txt" | "text" | "log" => "text/plain",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "bmp" => "image/bmp",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls" => "application/vnd.ms-excel",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt" => "application/vnd.ms-powerpoint",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt" => "application/vnd.oasis.opendocument.text",
        "ics" => "text/calendar",
        "vcf" => "text/vcard",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_one_or_a_list_and_never_empty() {
        assert_eq!(names_in(&json!("a.txt")), Ok(vec!["a.txt".to_owned()]));
        assert_eq!(
            names_in(&json!(["a.txt", "b/c.png"])),
            Ok(vec!["a.txt".to_owned(), "b/c.png".to_owned()])
        );
        assert!(names_in(&json!([])).unwrap_err().contains("at least one"));
        assert!(
            names_in(&json!([1]))
                .unwrap_err()
                .contains("must be a string")
        );
        assert!(
            names_in(&json!(" "))
                .unwrap_err()
                .contains("not a file name")
        );
        assert!(
            names_in(&json!(null))
                .unwrap_err()
                .contains("expected a file name")
        );
        let many: Vec<String> = (0..=MAX_UPLOAD_FILES).map(|i| format!("{i}")).collect();
        assert!(names_in(&json!(many)).unwrap_err().contains("at most"));
    }

    #[test]
    fn the_page_sees_the_last_part_and_a_type_by_extension() {
        let file = UploadFile {
            name: "docs/résumé ü.bin".into(),
            mime: mime_for("docs/résumé ü.bin").into(),
            data: String::new(),
        };
        assert_eq!(file.file_name(), "résumé ü.bin");
        assert_eq!(file.mime, "application/octet-stream");
        assert_eq!(mime_for("Photo.JPG"), "image/jpeg");
        assert_eq!(mime_for("table.csv"), "text/csv");
        assert_eq!(mime_for("dir.d/README"), "application/octet-stream");
    }
}
