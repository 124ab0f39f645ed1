//! The MCP clients `tabwire setup` configures and `tabwire doctor` checks: where each keeps its
//! config for this user (per OS), how to tell it is installed, what its entry for Tabwire looks
//! like, and the edit that adds or updates that entry. Edits go through a concrete syntax tree
//! (jsonc-parser), so everything else in the file (other servers, comments in VS Code's JSONC,
//! key order, indentation) stays exactly as it was.

use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::Value;

use crate::user_dirs::{Os, UserDirs};

/// The name of Tabwire's entry in every client's server list.
pub const ENTRY_NAME: &str = "tabwire";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
}

impl Client {
    pub const ALL: [Client; 4] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::VsCode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::VsCode => "VS Code",
        }
    }

    /// The user-level config file: Claude Desktop's and VS Code's in the OS's application config
    /// folder (`~/.config` on Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on
    /// Windows — or, for the Microsoft Store's Claude, its package's redirected copy of it),
    /// Claude Code's (`~/.claude.json`, where `claude mcp add --scope user` writes) and Cursor's
    /// in the home folder.
    pub fn config_file(self, dirs: &UserDirs) -> PathBuf {
        match self {
            Client::ClaudeDesktop => store_claude_folder(dirs)
                .unwrap_or_else(|| dirs.config.join("Claude"))
                .join("claude_desktop_config.json"),
            Client::ClaudeCode => dirs.home.join(".claude.json"),
            Client::Cursor => dirs.home.join(".cursor").join("mcp.json"),
            Client::VsCode => dirs.config.join("Code").join("User").join("mcp.json"),
        }
    }

    /// Whether the client is installed for this user: its config file, or the folder it
    /// creates on first start, exists.
    pub fn installed(self, dirs: &UserDirs) -> bool {
        let file = self.config_file(dirs);
        file.exists()
            || match self {
                Client::ClaudeCode => dirs.home.join(".claude").is_dir(),
                // The Store app's package folder is there from its install on; the folder in it
                // that holds the config, only once the app wrote something.
                Client::ClaudeDesktop => {
                    store_claude_folder(dirs).is_some() || file.parent().is_some_and(Path::is_dir)
                }
                Client::Cursor | Client::VsCode => file.parent().is_some_and(Path::is_dir),
            }
    }

    /// Whether the client reads its config as JSON with comments and trailing commas (VS Code's
    /// JSONC); the others parse theirs as strict JSON, so a comment there is refused, not kept.
    fn reads_comments(self) -> bool {
        match self {
            Client::VsCode => true,
            Client::ClaudeDesktop | Client::ClaudeCode | Client::Cursor => false,
        }
    }

    /// The top-level key of the server list.
    fn servers_key(self) -> &'static str {
        match self {
            Client::VsCode => "servers",
            _ => "mcpServers",
        }
    }

    /// Tabwire's entry: `command` with `args`, plus the `"type": "stdio"` that Claude Code and
    /// VS Code write for local servers.
    fn entry(self, launch: &Launch) -> Vec<(String, Value)> {
        let mut entry = Vec::new();
        if matches!(self, Client::ClaudeCode | Client::VsCode) {
            entry.push(("type".to_owned(), Value::from("stdio")));
        }
        entry.push((
            "command".to_owned(),
            Value::from(launch.command.to_string_lossy().into_owned()),
        ));
        entry.push(("args".to_owned(), Value::from(launch.args.clone())));
        entry
    }
}

/// The folder of Tabwire's `.mcpb` extension, when Claude Desktop installed it: a folder under
/// its `Claude Extensions` whose `manifest.json` names `tabwire`. Claude Desktop starts that copy
/// by itself, so `setup` must not add a second `tabwire` server beside it.
pub fn desktop_extension(dirs: &UserDirs) -> Option<PathBuf> {
    let claude = Client::ClaudeDesktop.config_file(dirs);
    let extensions = claude.parent()?.join("Claude Extensions");
    let mut found: Vec<PathBuf> = std::fs::read_dir(extensions)
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|dir| {
            std::fs::read_to_string(dir.join("manifest.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .is_some_and(|m| m["name"] == ENTRY_NAME)
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The Microsoft Store (MSIX) install of Claude Desktop on Windows: the app's writes to
/// `%APPDATA%\\Claude` land in `%LOCALAPPDATA%\\Packages\\Claude_<publisher id>\\LocalCache\\Roaming\\Claude`,
/// and that copy is the one it reads.
fn store_claude_folder(dirs: &UserDirs) -> Option<PathBuf> {
    if dirs.os != Os::Windows {
        return None;
    }
    let packages = dirs.home.join("AppData").join("Local").join("Packages");
    let mut found: Vec<PathBuf> = std::fs::read_dir(packages)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("Claude_"))
        .map(|entry| {
            entry
                .path()
                .join("LocalCache")
                .join("Roaming")
                .join("Claude")
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// How a client starts tabwire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub command: PathBuf,
    pub args: Vec<String>,
}

/// The command line, as a person would type it.
impl std::fmt::Display for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.command.display(), self.args.join(" "))
    }
}

/// What an edit did (or would do) to a config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Unchanged,
    /// No file: it is created with Tabwire alone.
    Created,
    Added,
    Updated,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub change: Change,
    /// The whole file after the edit.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("it is not valid JSON: {0}")]
    Syntax(String),
    /// A strict-JSON client's file that only JSONC accepts (a comment, a trailing comma): the
    /// client itself would not read it, and an edit could not keep it both intact and valid.
    #[error(
        "it is not strict JSON, which this client reads: {message} (line {line}: `{text}`); \
         correct that line, then run setup again"
    )]
    NotStrictJson {
        message: String,
        line: usize,
        text: String,
    },
    /// The edited text would not read back (a guard: nothing is written then).
    #[error("the edit would leave it unreadable ({0}); nothing was written")]
    WouldBreak(String),
    #[error("its top level is not an object")]
    NotAnObject,
    #[error("its \"{0}\" is not an object")]
    ServersNotAnObject(&'static str),
}

/// Adds Tabwire to the config `text` of `client` (`None`: no file yet), or brings an existing
/// entry up to date: its `command`, `args` and `type` are set, any other key in it (an `env`
/// the user added) is kept. Nothing else in the file changes.
pub fn edit(client: Client, text: Option<&str>, launch: &Launch) -> Result<Edit, EditError> {
    let (bom, body) = split_bom(text.unwrap_or_default());
    let edit = edit_body(client, text.map(|_| body), launch)?;
    if !client.reads_comments() && !body.trim().is_empty() {
        strict_json(body)?;
    }
    // Read the result back as the client will: a file it cannot read is never written.
    if edit.change != Change::Unchanged {
        if !client.reads_comments() {
            strict_json(&edit.text).map_err(|e| EditError::WouldBreak(e.to_string()))?;
        }
        if find_entry(client, &edit.text).as_ref() != Some(launch) {
            return Err(EditError::WouldBreak(
                "Tabwire's entry does not read back".to_owned(),
            ));
        }
    }
    Ok(Edit {
        change: edit.change,
        text: format!("{bom}{}", edit.text),
    })
}

/// The byte-order mark some editors (Notepad, PowerShell's `Out-File`) put at a file's start:
/// kept as it was, and not part of the JSON.
const BOM: &str = "\u{feff}";

fn split_bom(text: &str) -> (&'static str, &str) {
    match text.strip_prefix(BOM) {
        Some(body) => (BOM, body),
        None => ("", text),
    }
}

/// Checks `text` is strict JSON; the error names the line and shows it.
fn strict_json(text: &str) -> Result<(), EditError> {
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(|_| ())
        .map_err(|e| EditError::NotStrictJson {
            message: e.to_string(),
            line: e.line(),
            text: text
                .lines()
                .nth(e.line().saturating_sub(1))
                .unwrap_or_default()
                .trim()
                .to_owned(),
        })
}

/// [`edit`] on a file's text without its byte-order mark.
fn edit_body(client: Client, text: Option<&str>, launch: &Launch) -> Result<Edit, EditError> {
    let entry = client.entry(launch);
    let created = text.is_none_or(|t| t.trim().is_empty());
    let text = if created {
        "{}\n"
    } else {
        text.unwrap_or_default()
    };
    let root = CstRootNode::parse(text, &ParseOptions::default())
        .map_err(|e| EditError::Syntax(e.to_string()))?;
    if root.value().is_some() && root.object_value().is_none() {
        return Err(EditError::NotAnObject);
    }
    let top = root.object_value_or_set();
    let key = client.servers_key();
    if top.get(key).is_some() && top.object_value(key).is_none() {
        return Err(EditError::ServersNotAnObject(key));
    }
    let servers = top.object_value_or_set(key);
    let change = match servers.get(ENTRY_NAME) {
        None if created => {
            servers.append(ENTRY_NAME, input_object(&entry));
            Change::Created
        }
        None => {
            servers.append(ENTRY_NAME, input_object(&entry));
            Change::Added
        }
        Some(prop) => match prop.object_value() {
            Some(existing) => {
                let mut changed = false;
                for (name, value) in &entry {
                    let current = existing
                        .get(name)
                        .and_then(|p| p.value())
                        .and_then(|v| v.to_serde_value());
                    if current.as_ref() == Some(value) {
                        continue;
                    }
                    changed = true;
                    match existing.get(name) {
                        Some(p) => p.set_value(input(value)),
                        None => {
                            existing.append(name, input(value));
                        }
                    }
                }
                if changed {
                    Change::Updated
                } else {
                    Change::Unchanged
                }
            }
            None => {
                prop.set_value(input_object(&entry));
                Change::Updated
            }
        },
    };
    let text = match change {
        Change::Unchanged => text.to_owned(),
        _ => root.to_string(),
    };
    Ok(Edit { change, text })
}

fn input_object(entry: &[(String, Value)]) -> CstInputValue {
    CstInputValue::Object(entry.iter().map(|(k, v)| (k.clone(), input(v))).collect())
}

fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// `text` without Tabwire's entry (`None`: it has none). For Claude Desktop once the `.mcpb` is
/// installed there: one Tabwire, not two.
pub fn remove_entry(client: Client, text: &str) -> Result<Option<String>, EditError> {
    let (bom, body) = split_bom(text);
    let root = CstRootNode::parse(body, &ParseOptions::default())
        .map_err(|e| EditError::Syntax(e.to_string()))?;
    let Some(prop) = root
        .object_value()
        .and_then(|top| top.object_value(client.servers_key()))
        .and_then(|servers| servers.get(ENTRY_NAME))
    else {
        return Ok(None);
    };
    prop.remove();
    let after = root.to_string();
    if !client.reads_comments() {
        strict_json(&after).map_err(|e| EditError::WouldBreak(e.to_string()))?;
    }
    Ok(Some(format!("{bom}{after}")))
}

/// Tabwire's entry in a config `text`, if it has one: how that client would start tabwire.
pub fn find_entry(client: Client, text: &str) -> Option<Launch> {
    let (_, text) = split_bom(text);
    let root = CstRootNode::parse(text, &ParseOptions::default()).ok()?;
    let entry = root
        .object_value()?
        .object_value(client.servers_key())?
        .object_value(ENTRY_NAME)?;
    let entry = entry.to_serde_value()?;
    Some(Launch {
        command: PathBuf::from(entry["command"].as_str()?),
        args: entry["args"]
            .as_array()
            .map(|args| {
                args.iter()
                    .filter_map(|a| a.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// A unified diff of `before` (empty: no file) and `after`, for `setup --dry-run`.
pub fn diff(path: &Path, before: Option<&str>, after: &str) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(before.unwrap_or(""), after)
        .unified_diff()
        .context_radius(3)
        .header(if before.is_some() { &name } else { "/dev/null" }, &name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> Launch {
        Launch {
            command: PathBuf::from("/opt/tabwire/tabwire"),
            args: vec!["mcp".to_owned()],
        }
    }

    fn user(os: Os) -> UserDirs {
        let (home, config) = match os {
            Os::Linux => ("/home/ann", "/home/ann/.config"),
            Os::Mac => ("/Users/ann", "/Users/ann/Library/Application Support"),
            Os::Windows => ("C:/Users/ann", "C:/Users/ann/AppData/Roaming"),
        };
        UserDirs {
            os,
            home: home.into(),
            config: config.into(),
            data: config.into(),
        }
    }

    #[test]
    fn config_files_are_where_each_client_keeps_them() {
        for (client, os, file) in [
            (
                Client::ClaudeDesktop,
                Os::Mac,
                "/Users/ann/Library/Application Support/Claude/claude_desktop_config.json",
            ),
            (
                Client::ClaudeDesktop,
                Os::Windows,
                "C:/Users/ann/AppData/Roaming/Claude/claude_desktop_config.json",
            ),
            (
                Client::VsCode,
                Os::Windows,
                "C:/Users/ann/AppData/Roaming/Code/User/mcp.json",
            ),
            (
                Client::ClaudeDesktop,
                Os::Linux,
                "/home/ann/.config/Claude/claude_desktop_config.json",
            ),
            (Client::ClaudeCode, Os::Linux, "/home/ann/.claude.json"),
            (Client::Cursor, Os::Linux, "/home/ann/.cursor/mcp.json"),
        ] {
            let config = client.config_file(&user(os));
            assert_eq!(config, PathBuf::from(file), "{client:?} on {os:?}");
        }
    }

    #[test]
    fn adding_keeps_every_other_server_and_the_formatting() {
        let before = "{\n    \"mcpServers\": {\n        \"files\": {\"command\": \"npx\", \"args\": [\"fs\"]}\n    },\n    \"theme\": \"dark\"\n}\n";
        let edit = edit(Client::ClaudeDesktop, Some(before), &launch()).unwrap();
        assert_eq!(edit.change, Change::Added);
        let after: Value = serde_json::from_str(&edit.text).unwrap();
        assert_eq!(after["mcpServers"]["files"]["args"][0], "fs");
        assert_eq!(after["theme"], "dark");
        assert_eq!(
            after["mcpServers"]["tabwire"]["command"],
            "/opt/tabwire/tabwire"
        );
        assert_eq!(
            after["mcpServers"]["tabwire"]["args"],
            serde_json::json!(["mcp"])
        );
        assert!(edit.text.starts_with("{\n    \"mcpServers\": {\n        \"files\": {\"command\": \"npx\", \"args\": [\"fs\"]},\n"), "{}", edit.text);
    }

    #[test]
    fn a_second_edit_changes_nothing() {
        let first = edit(Client::Cursor, None, &launch()).unwrap();
        assert_eq!(first.change, Change::Created);
        let second = edit(Client::Cursor, Some(&first.text), &launch()).unwrap();
        assert_eq!(second.change, Change::Unchanged);
        assert_eq!(second.text, first.text);
        assert_eq!(find_entry(Client::Cursor, &second.text), Some(launch()));
    }

    #[test]
    fn an_outdated_entry_is_updated_keeping_the_users_additions() {
        let before = r#"{"mcpServers": {"tabwire": {"command": "/old/tabwire", "args": ["mcp"], "env": {"RUST_LOG": "debug"}}}}"#;
        let edit = edit(Client::ClaudeDesktop, Some(before), &launch()).unwrap();
        assert_eq!(edit.change, Change::Updated);
        let after: Value = serde_json::from_str(&edit.text).unwrap();
        assert_eq!(
            after["mcpServers"]["tabwire"]["command"],
            "/opt/tabwire/tabwire"
        );
        assert_eq!(after["mcpServers"]["tabwire"]["env"]["RUST_LOG"], "debug");
    }

    #[test]
    fn vs_code_jsonc_keeps_its_comments_and_uses_servers() {
        let before = "// my servers\n{\n  \"servers\": {\n    // the GitHub one\n    \"github\": {\"type\": \"http\", \"url\": \"https://example.invalid/mcp\"},\n  },\n  \"inputs\": []\n}\n";
        let edit = edit(Client::VsCode, Some(before), &launch()).unwrap();
        assert_eq!(edit.change, Change::Added);
        assert!(edit.text.contains("// my servers") && edit.text.contains("// the GitHub one"));
        let entry = find_entry(Client::VsCode, &edit.text).unwrap();
        assert_eq!(entry, launch());
        assert!(edit.text.contains("\"type\": \"stdio\""), "{}", edit.text);
    }

    #[test]
    fn broken_configs_are_refused_not_rewritten() {
        for (text, expected) in [
            ("{\"mcpServers\": {", "not valid JSON"),
            ("[1, 2]", "top level"),
            ("{\"mcpServers\": []}", "\"mcpServers\" is not an object"),
        ] {
            let error = edit(Client::ClaudeDesktop, Some(text), &launch()).unwrap_err();
            assert!(error.to_string().contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn the_dry_run_diff_shows_the_added_lines() {
        let before = "{\n  \"mcpServers\": {}\n}\n";
        let edit = edit(Client::ClaudeDesktop, Some(before), &launch()).unwrap();
        let diff = diff(Path::new("/c.json"), Some(before), &edit.text);
        assert!(diff.starts_with("--- /c.json\n+++ /c.json\n"), "{diff}");
        assert!(
            diff.contains("+      \"command\": \"/opt/tabwire/tabwire\","),
            "{diff}"
        );
    }

    #[test]
    fn the_store_install_of_claude_desktop_on_windows_is_found_in_its_package() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("Users").join("ann");
        let dirs = UserDirs {
            os: Os::Windows,
            home: home.clone(),
            config: home.join("AppData").join("Roaming"),
            data: home.join("AppData").join("Roaming"),
        };
        let classic = home.join("AppData/Roaming/Claude/claude_desktop_config.json");
        assert_eq!(Client::ClaudeDesktop.config_file(&dirs), classic);
        assert!(!Client::ClaudeDesktop.installed(&dirs));
        let package = home.join("AppData/Local/Packages/Claude_pzs8sxrjxfjjc");
        std::fs::create_dir_all(&package).unwrap();
        assert!(
            Client::ClaudeDesktop.installed(&dirs),
            "the Store app counts as installed"
        );
        assert_eq!(
            Client::ClaudeDesktop.config_file(&dirs),
            package.join("LocalCache/Roaming/Claude/claude_desktop_config.json")
        );
        let linux = UserDirs {
            os: Os::Linux,
            ..dirs
        };
        assert_eq!(
            Client::ClaudeDesktop.config_file(&linux),
            classic,
            "a Packages folder means nothing off Windows"
        );
    }

    #[test]
    fn a_byte_order_mark_is_kept_and_the_result_is_json_after_it() {
        let before = "\u{feff}{\"mcpServers\": {\"files\": {\"command\": \"npx\"}}}\n";
        let edit = edit(Client::ClaudeDesktop, Some(before), &launch()).unwrap();
        assert_eq!(edit.change, Change::Added);
        let body = edit
            .text
            .strip_prefix('\u{feff}')
            .expect("the mark stays first");
        let after: Value = serde_json::from_str(body).unwrap();
        assert_eq!(after["mcpServers"]["files"]["command"], "npx");
        assert_eq!(
            find_entry(Client::ClaudeDesktop, &edit.text),
            Some(launch())
        );
        let again = super::edit(Client::ClaudeDesktop, Some(&edit.text), &launch()).unwrap();
        assert_eq!(again.change, Change::Unchanged);
    }

    #[test]
    fn a_strict_clients_file_with_comments_or_trailing_commas_is_refused_naming_the_line() {
        let commented = "{\n  // mine\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}\n";
        let error = edit(Client::ClaudeCode, Some(commented), &launch()).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("line 2: `// mine`"), "{text}");
        let trailing = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n";
        let error = edit(Client::ClaudeCode, Some(trailing), &launch()).unwrap_err();
        assert!(error.to_string().contains("line 4: `}`"), "{error}");
        // VS Code reads JSONC: the same text is edited there, and reads back.
        let vscode = trailing.replace("mcpServers", "servers");
        let edit = edit(Client::VsCode, Some(&vscode), &launch()).unwrap();
        assert_eq!(find_entry(Client::VsCode, &edit.text), Some(launch()));
    }
}
