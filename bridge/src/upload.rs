//! Files a call puts on the page (`upload` steps, `page_act`'s `upload`): what travels with the
//! call, server → worker → page, and the rules both ends share. The server alone reads files, and
//! only from the user's uploads directory; the page only ever gets the bytes it was sent.
//!
//! On the socket a call declares its files ([`DeclaredFile`]) and their bytes follow in
//! `upload_chunk` frames of [`CHUNK_BASE64`] characters of base64 each, so no frame nears
//! [`crate::MAX_MESSAGE_BYTES`] whatever the files' size. [`Assemblies`] puts each call's files
//! back together (the worker's, and a hub's for a peer's calls) and hands the call on whole.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ErrorCode, ToExtension, WireError};

/// The most bytes of files one call may carry, all files together. The worker hands a call's
/// files to its page in one extension message, which Chrome refuses over 64 MiB; as base64,
/// 32 MiB is 42.7 MiB, with room for the call's other fields. The worker and the page each
/// hold a call's files while it runs, so this is also what one upload costs each of them.
pub const MAX_UPLOAD_BYTES: u64 = 32 * 1024 * 1024;

/// The bytes of a file one `upload_chunk` frame carries: a multiple of 3, so every chunk but a
/// file's last is base64 without padding, and the chunks' text joined is the file's base64.
pub const CHUNK_BYTES: usize = 768 * 1024;

/// The base64 characters of a full chunk (1 MiB).
pub const CHUNK_BASE64: usize = CHUNK_BYTES / 3 * 4;

/// How many calls may wait for their files' chunks at once. A hub sends a call's chunks right
/// after it, before any other frame, so one waits at a time; this bounds what a misbehaving
/// sender can make the receiver hold (this many times [`MAX_UPLOAD_BYTES`]).
pub const MAX_WAITING_UPLOADS: usize = 2;

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

    /// The file as its call declares it, ahead of its bytes.
    pub fn declared(&self) -> DeclaredFile {
        let padding = self.data.bytes().rev().take_while(|&b| b == b'=').count();
        DeclaredFile {
            name: self.name.clone(),
            mime: self.mime.clone(),
            size: (self.data.len() / 4 * 3).saturating_sub(padding) as u64,
        }
    }

    /// Its base64 in the pieces `upload_chunk` frames carry, in order.
    pub fn chunks(&self) -> impl Iterator<Item = &str> {
        // Base64 is ASCII, so every cut falls on a character boundary; a text that is not
        // (never the server's own) is cut where it can be and refused by the receiver.
        let data = self.data.as_str();
        (0..data.len()).step_by(CHUNK_BASE64).map(move |at| {
            data.get(at..(at + CHUNK_BASE64).min(data.len()))
                .unwrap_or("")
        })
    }
}

/// A file as a call declares it on the socket: its bytes follow in `upload_chunk` frames.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredFile {
    /// As [`UploadFile::name`].
    pub name: String,
    /// As [`UploadFile::mime`].
    pub mime: String,
    /// Its length in bytes.
    pub size: u64,
}

impl DeclaredFile {
    /// The length of its base64.
    fn base64_len(&self) -> usize {
        usize::try_from(self.size.div_ceil(3) * 4).unwrap_or(usize::MAX)
    }

    /// How many chunks carry it.
    fn chunk_count(&self) -> usize {
        self.base64_len().div_ceil(CHUNK_BASE64)
    }

    /// The base64 length chunk `index` of it has.
    fn chunk_len(&self, index: usize) -> usize {
        (self.base64_len() - index * CHUNK_BASE64).min(CHUNK_BASE64)
    }
}

/// One file of a waiting call: its chunks so far, by index.
struct Incoming {
    declared: DeclaredFile,
    chunks: Vec<Option<String>>,
}

/// A call waiting for its files.
struct Assembly<T> {
    call: T,
    files: Vec<Incoming>,
    missing: usize,
}

/// A call whose files are all in: the call as it was held, and its files whole.
pub type Assembled<T> = (T, Vec<UploadFile>);

/// The calls waiting for their files' chunks, by request id: chunks may come in any order; a
/// duplicate, one of the wrong length or for a file or index the call did not declare fails the
/// call (and frees what it held); a call that never gets all its chunks is freed by
/// [`Assemblies::forget`] (its cancel, at its deadline) or [`Assemblies::clear`] (its socket
/// closed). `T` is the call, held as the receiver decoded it.
pub struct Assemblies<T> {
    waiting: HashMap<String, Assembly<T>>,
}

impl<T> Default for Assemblies<T> {
    fn default() -> Self {
        Assemblies {
            waiting: HashMap::new(),
        }
    }
}

impl<T> Assemblies<T> {
    /// Holds call `id`, which declared `files`, until their chunks are in; answers it at once
    /// when it has no bytes to wait for. A call over [`MAX_UPLOAD_BYTES`] or
    /// [`MAX_UPLOAD_FILES`] is refused, as is one more than [`MAX_WAITING_UPLOADS`].
    pub fn hold(
        &mut self,
        id: &str,
        files: Vec<DeclaredFile>,
        call: T,
    ) -> Result<Option<Assembled<T>>, WireError> {
        let total = files.iter().fold(0u64, |sum, f| sum.saturating_add(f.size));
        if total > MAX_UPLOAD_BYTES || files.len() > MAX_UPLOAD_FILES {
            return Err(WireError::new(
                ErrorCode::TooLarge,
                format!(
                    "call {id} declares {} files of {total} bytes: one call carries at most {MAX_UPLOAD_FILES} files of {MAX_UPLOAD_BYTES} bytes",
                    files.len()
                ),
            ));
        }
        if self.waiting.contains_key(id) {
            return Err(protocol(format!(
                "call {id} is already waiting for its files"
            )));
        }
        if self.waiting.len() >= MAX_WAITING_UPLOADS {
            return Err(WireError::new(
                ErrorCode::TooMany,
                format!("{MAX_WAITING_UPLOADS} calls are waiting for their files already"),
            ));
        }
        let files: Vec<Incoming> = files
            .into_iter()
            .map(|declared| Incoming {
                chunks: vec![None; declared.chunk_count()],
                declared,
            })
            .collect();
        let missing = files.iter().map(|f| f.chunks.len()).sum();
        let assembly = Assembly {
            call,
            files,
            missing,
        };
        if missing == 0 {
            return Ok(Some(assembly.finish()));
        }
        self.waiting.insert(id.to_owned(), assembly);
        Ok(None)
    }

    /// Adds chunk `index` of file `file` of call `id`; answers the call once its last chunk is in.
    pub fn add(
        &mut self,
        id: &str,
        file: usize,
        index: usize,
        data: String,
    ) -> Result<Option<Assembled<T>>, WireError> {
        let Some(assembly) = self.waiting.get_mut(id) else {
            return Err(protocol(format!(
                "a chunk for call {id}, which waits for no files"
            )));
        };
        if let Err(error) = assembly.put(file, index, data) {
            self.waiting.remove(id);
            return Err(protocol(format!("call {id}: {error}")));
        }
        if assembly.missing > 0 {
            return Ok(None);
        }
        Ok(self.waiting.remove(id).map(Assembly::finish))
    }

    /// Frees call `id`'s chunks (cancelled, or out of time); whether it was waiting.
    pub fn forget(&mut self, id: &str) -> bool {
        self.waiting.remove(id).is_some()
    }

    /// Frees every waiting call's chunks (the socket closed), answering their ids.
    pub fn clear(&mut self) -> Vec<String> {
        self.waiting.drain().map(|(id, _)| id).collect()
    }

    /// The bytes of base64 held, all calls together.
    pub fn held_bytes(&self) -> usize {
        self.waiting
            .values()
            .flat_map(|a| &a.files)
            .flat_map(|f| f.chunks.iter().flatten())
            .map(String::len)
            .sum()
    }
}

impl Assemblies<ToExtension> {
    /// Takes frame `msg` as it arrives: a call declaring files is held until their chunks are
    /// in, a chunk is added to its call; answers a frame that can go on (with its call's files:
    /// none for any other frame), `None` while its call waits, or the id of the call that failed.
    pub fn receive(
        &mut self,
        msg: ToExtension,
    ) -> Result<Option<Assembled<ToExtension>>, (String, WireError)> {
        let (id, held) = match msg {
            ToExtension::CallTool {
                ref id, ref files, ..
            }
            | ToExtension::PageOp {
                ref id,
                call: crate::page::PageCall { ref files, .. },
                ..
            } if !files.is_empty() => {
                let (id, files) = (id.clone(), files.clone());
                let held = self.hold(&id, files, msg);
                (id, held)
            }
            ToExtension::UploadChunk {
                id,
                file,
                index,
                data,
            } => {
                let held = self.add(&id, file, index, data);
                (id, held)
            }
            other => return Ok(Some((other, Vec::new()))),
        };
        held.map_err(|error| (id, error))
    }
}

impl<T> Assembly<T> {
    fn put(&mut self, file: usize, index: usize, data: String) -> Result<(), String> {
        let count = self.files.len();
        let incoming = self
            .files
            .get_mut(file)
            .ok_or_else(|| format!("a chunk of file {file}, of {count} declared"))?;
        let name = &incoming.declared.name;
        let chunks = incoming.chunks.len();
        let slot = incoming
            .chunks
            .get_mut(index)
            .ok_or_else(|| format!("chunk {index} of {name:?}, which has {chunks}"))?;
        if slot.is_some() {
            return Err(format!("chunk {index} of {name:?} came twice"));
        }
        let expected = incoming.declared.chunk_len(index);
        if data.len() != expected {
            return Err(format!(
                "chunk {index} of {name:?} has {} characters, not {expected}",
                data.len()
            ));
        }
        if !data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        {
            return Err(format!("chunk {index} of {name:?} is not base64"));
        }
        *slot = Some(data);
        self.missing -= 1;
        Ok(())
    }

    fn finish(self) -> Assembled<T> {
        let files = self
            .files
            .into_iter()
            .map(|incoming| UploadFile {
                data: incoming.chunks.into_iter().flatten().collect(),
                name: incoming.declared.name,
                mime: incoming.declared.mime,
            })
            .collect();
        (self.call, files)
    }
}

fn protocol(message: String) -> WireError {
    WireError::new(ErrorCode::Protocol, message)
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

    /// A file of `size` bytes as the server sends it, its bytes counting up.
    fn file_of(name: &str, size: usize) -> UploadFile {
        let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        UploadFile {
            name: name.into(),
            mime: mime_for(name).into(),
            data: base64_of(&bytes),
        }
    }

    /// Standard base64 with padding, written out here so the test needs no crate.
    fn base64_of(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for group in bytes.chunks(3) {
            let n = group
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
            for i in 0..4 {
                out.push(if i <= group.len() {
                    ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char
                } else {
                    '='
                });
            }
        }
        out
    }

    fn chunks_of(file: &UploadFile) -> Vec<String> {
        file.chunks().map(str::to_owned).collect()
    }

    #[test]
    fn a_file_declares_its_size_and_its_chunks_join_into_its_base64() {
        for size in [
            0,
            1,
            2,
            3,
            CHUNK_BYTES - 1,
            CHUNK_BYTES,
            CHUNK_BYTES + 1,
            2 * CHUNK_BYTES + 2,
        ] {
            let file = file_of("a.bin", size);
            assert_eq!(file.declared().size, size as u64, "size {size}");
            let chunks = chunks_of(&file);
            assert_eq!(chunks.len(), file.declared().chunk_count(), "size {size}");
            assert!(chunks.iter().all(|c| c.len() <= CHUNK_BASE64));
            assert_eq!(chunks.concat(), file.data);
            for (index, chunk) in chunks.iter().enumerate() {
                assert_eq!(chunk.len(), file.declared().chunk_len(index));
            }
        }
    }

    #[test]
    fn chunks_in_any_order_give_the_call_its_files_whole() {
        let (big, small, empty) = (
            file_of("big.pdf", 3 * CHUNK_BYTES + 10),
            file_of("small.txt", 5),
            file_of("empty", 0),
        );
        let mut waiting = Assemblies::default();
        let declared = vec![big.declared(), small.declared(), empty.declared()];
        assert_eq!(waiting.hold("c1", declared, "the call"), Ok(None));
        let mut chunks: Vec<(usize, usize, String)> = [&big, &small]
            .iter()
            .enumerate()
            .flat_map(|(f, file)| {
                chunks_of(file)
                    .into_iter()
                    .enumerate()
                    .map(move |(i, c)| (f, i, c))
            })
            .collect();
        chunks.reverse();
        let last = chunks.pop().unwrap();
        for (file, index, data) in chunks {
            assert_eq!(waiting.add("c1", file, index, data), Ok(None));
        }
        let (call, files) = waiting.add("c1", last.0, last.1, last.2).unwrap().unwrap();
        assert_eq!(call, "the call");
        assert_eq!(files, vec![big, small, empty]);
        assert_eq!(waiting.held_bytes(), 0);
        assert!(!waiting.forget("c1"), "a finished call is not held");
    }

    #[test]
    fn a_call_with_no_bytes_to_wait_for_goes_on_at_once() {
        let mut waiting = Assemblies::default();
        let empty = file_of("empty.txt", 0);
        assert_eq!(
            waiting.hold("c1", vec![empty.declared()], 7),
            Ok(Some((7, vec![empty])))
        );
    }

    #[test]
    fn a_duplicate_a_wrong_length_or_an_undeclared_chunk_fails_the_call_and_frees_it() {
        let file = file_of("a.bin", 2 * CHUNK_BYTES);
        let chunks = chunks_of(&file);
        let bad: [(&str, usize, usize, String); 5] = [
            ("came twice", 0, 0, chunks[0].clone()),
            ("characters, not", 0, 1, chunks[1][1..].to_owned()),
            ("characters, not", 0, 1, format!("{}AAAA", chunks[1])),
            ("which has 2", 0, 2, chunks[1].clone()),
            ("of 1 declared", 1, 0, chunks[1].clone()),
        ];
        for (why, f, index, data) in bad {
            let mut waiting = Assemblies::default();
            waiting.hold("c1", vec![file.declared()], ()).unwrap();
            waiting.add("c1", 0, 0, chunks[0].clone()).unwrap();
            let error = waiting.add("c1", f, index, data).unwrap_err();
            assert_eq!(error.code, ErrorCode::Protocol);
            assert!(error.message.contains(why), "{why}: {}", error.message);
            assert_eq!(waiting.held_bytes(), 0, "{why}: freed");
            assert!(!waiting.forget("c1"));
        }
        let mut waiting = Assemblies::default();
        waiting.hold("c1", vec![file.declared()], ()).unwrap();
        let not_base64 = "!".repeat(CHUNK_BASE64);
        let error = waiting.add("c1", 0, 0, not_base64).unwrap_err();
        assert!(error.message.contains("not base64"), "{}", error.message);
    }

    #[test]
    fn a_chunk_for_another_call_is_refused_and_the_waiting_call_keeps_its_chunks() {
        let file = file_of("a.bin", CHUNK_BYTES + 1);
        let chunks = chunks_of(&file);
        let mut waiting = Assemblies::default();
        waiting.hold("c1", vec![file.declared()], ()).unwrap();
        waiting.add("c1", 0, 0, chunks[0].clone()).unwrap();
        let error = waiting.add("c2", 0, 1, chunks[1].clone()).unwrap_err();
        assert!(error.message.contains("call c2, which waits for no files"));
        assert_eq!(waiting.held_bytes(), CHUNK_BASE64);
        assert!(
            waiting
                .add("c1", 0, 1, chunks[1].clone())
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_call_missing_a_chunk_waits_until_cancelled_or_its_socket_closes_then_holds_nothing() {
        let file = file_of("a.bin", 2 * CHUNK_BYTES);
        let chunks = chunks_of(&file);
        let mut waiting = Assemblies::default();
        for id in ["c1", "c2"] {
            waiting.hold(id, vec![file.declared()], ()).unwrap();
            assert_eq!(waiting.add(id, 0, 1, chunks[1].clone()), Ok(None));
        }
        assert_eq!(waiting.held_bytes(), 2 * CHUNK_BASE64);
        assert!(waiting.forget("c1"));
        assert_eq!(waiting.held_bytes(), CHUNK_BASE64);
        assert_eq!(waiting.clear(), vec!["c2".to_owned()]);
        assert_eq!(waiting.held_bytes(), 0);
        assert!(waiting.add("c2", 0, 0, chunks[0].clone()).is_err());
    }

    #[test]
    fn a_call_over_the_cap_or_one_too_many_waiting_is_refused_before_any_chunk() {
        let mut waiting = Assemblies::default();
        let over = DeclaredFile {
            name: "huge.iso".into(),
            mime: "application/octet-stream".into(),
            size: MAX_UPLOAD_BYTES + 1,
        };
        let error = waiting.hold("c1", vec![over], ()).unwrap_err();
        assert_eq!(error.code, ErrorCode::TooLarge);
        let halves = vec![
            DeclaredFile {
                size: MAX_UPLOAD_BYTES / 2 + 1,
                ..file_of("a", 0).declared()
            };
            2
        ];
        assert_eq!(
            waiting.hold("c1", halves, ()).unwrap_err().code,
            ErrorCode::TooLarge,
            "the cap is for all files together"
        );
        let one = file_of("a.bin", 10).declared();
        for i in 0..MAX_WAITING_UPLOADS {
            waiting
                .hold(&format!("c{i}"), vec![one.clone()], ())
                .unwrap();
        }
        let error = waiting.hold("c0", vec![one.clone()], ()).unwrap_err();
        assert!(error.message.contains("already waiting"));
        let error = waiting.hold("one more", vec![one], ()).unwrap_err();
        assert_eq!(error.code, ErrorCode::TooMany);
    }
}
