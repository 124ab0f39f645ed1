//! `tabwire setup`: everything a new user needs but one click. Copies this binary to a stable
//! per-user place (clients start that copy, never a download or build folder), creates the pairing
//! secret, writes the extension this binary carries (paired) into a folder, adds or updates Tabwire in the config
//! of every MCP client installed for this user (a backup of each changed file first; a run with
//! nothing to change writes nothing), and prints the one step left: Chrome's "Load unpacked" with
//! that folder. `--dry-run` prints what would change (a diff of each config) and writes nothing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::{DEFAULT_PORT, SetupArgs};
use crate::clients::{self, Change, Client, Launch};
use crate::pairing;
use crate::user_dirs::{Os, UserDirs};

/// The suffix of the copy `setup` keeps of a client config before changing it.
pub const BACKUP_SUFFIX: &str = ".tabwire.bak";

/// Runs setup; the report goes to stdout. Fails (after doing all it can) when a client's config
/// could not be updated.
pub fn run(args: &SetupArgs) -> anyhow::Result<()> {
    let dirs =
        UserDirs::from_env().context("cannot tell where this user's folders are (is HOME set?)")?;
    let (report, ok) = setup(&dirs, args, &current_binary()?)?;
    print!("{report}");
    anyhow::ensure!(ok, "some MCP client configs were not updated (see above)");
    Ok(())
}

/// This binary's path, with links resolved.
pub fn current_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding this binary's path")?;
    Ok(without_verbatim_prefix(exe.canonicalize().unwrap_or(exe)))
}

/// `path` without the `\\?\` prefix Windows' canonicalization adds (`\\?\C:\...`): people and
/// MCP clients expect the plain `C:\...` form, which means the same for paths of normal length.
pub fn without_verbatim_prefix(path: PathBuf) -> PathBuf {
    let text = path.to_string_lossy();
    match text.strip_prefix(r"\\?\") {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => PathBuf::from(rest),
        Some(_) | None => path,
    }
}

/// How the clients start tabwire: `mcp`, plus the port and secret file when not the defaults.
pub fn launch(binary: &Path, args: &SetupArgs, dirs: &UserDirs) -> Launch {
    let mut launch_args = vec!["mcp".to_owned()];
    if args.connection.port != DEFAULT_PORT {
        launch_args.extend(["--port".to_owned(), args.connection.port.to_string()]);
    }
    if let Some(secret) = &args.connection.secret_file
        && *secret != dirs.secret()
    {
        launch_args.extend(["--secret-file".to_owned(), secret.display().to_string()]);
    }
    Launch {
        command: binary.to_owned(),
        args: launch_args,
    }
}

/// Does the work; returns the report and whether every client config is in order.
fn setup(dirs: &UserDirs, args: &SetupArgs, binary: &Path) -> anyhow::Result<(String, bool)> {
    let mut out = String::new();
    let dry = args.dry_run;
    let port = args.connection.port;
    let secret_path = args
        .connection
        .secret_file
        .clone()
        .unwrap_or_else(|| dirs.secret());
    let extension_dir = args
        .extension_dir
        .clone()
        .unwrap_or_else(|| dirs.default_extension());
    let extension_dir = std::path::absolute(&extension_dir).unwrap_or(extension_dir);
    if dry {
        writeln!(out, "Dry run: nothing is written.\n")?;
    }

    // 1. The binary, the secret and the paired extension.
    let installed = dirs.installed_binary();
    if dry {
        writeln!(
            out,
            "Binary: {} would be copied to {}",
            binary.display(),
            installed.display()
        )?;
    } else {
        let copied = install_binary(binary, &installed)?;
        writeln!(
            out,
            "Binary: {} ({})",
            installed.display(),
            if copied { "copied" } else { "up to date" }
        )?;
    }
    if dry {
        let exists = secret_path.exists();
        writeln!(
            out,
            "Pairing secret: {} ({})",
            secret_path.display(),
            if exists { "exists" } else { "would be created" }
        )?;
        writeln!(
            out,
            "Extension: would be written to {} and paired for port {port}",
            extension_dir.display()
        )?;
    } else {
        let secret = pairing::load_or_create_secret(&secret_path)?;
        writeln!(out, "Pairing secret: {}", secret_path.display())?;
        crate::extension::install(
            dirs,
            &extension_dir,
            port,
            &secret,
            crate::extension::Browser::Chrome,
        )
        .with_context(|| format!("writing the extension to {}", extension_dir.display()))?;
        writeln!(
            out,
            "Extension {}: written to {} and paired for port {port}",
            crate::extension::VERSION,
            extension_dir.display()
        )?;
    }

    // 2. The MCP clients.
    let launch = launch(&installed, args, dirs);
    writeln!(out, "\nMCP clients (each starts: {launch}):")?;
    let mut all_ok = true;
    let mut configured = 0;
    for client in Client::ALL {
        let file = client.config_file(dirs);
        if !client.installed(dirs) {
            writeln!(
                out,
                "  {:<15} not found ({} does not exist)",
                client.name(),
                file.display()
            )?;
            continue;
        }
        if client == Client::ClaudeDesktop
            && let Some(bundle) = clients::desktop_extension(dirs)
        {
            // Installed from the .mcpb: a `tabwire` server in the config too would be a second one.
            writeln!(
                out,
                "  {:<15} has Tabwire installed as an extension (.mcpb, in {}); not added again",
                client.name(),
                bundle.display()
            )?;
            configured += 1;
            if let Err(e) = drop_entry(client, &file, dry, &mut out) {
                all_ok = false;
                writeln!(out, "  {:<15} NOT UPDATED: {e:#}", client.name())?;
            }
            continue;
        }
        match configure(client, &file, &launch, dry, &mut out) {
            Ok(()) => configured += 1,
            Err(e) => {
                all_ok = false;
                writeln!(out, "  {:<15} NOT UPDATED: {e:#}", client.name())?;
                writeln!(out, "{}", manual_entry(client, &launch))?;
            }
        }
    }
    if configured == 0 && all_ok {
        writeln!(
            out,
            "  No MCP client found. Add Tabwire to yours by hand: the command is\n    {launch}"
        )?;
    }

    // 3. What is left.
    let paste = match dirs.os {
        Os::Mac => "in the folder dialog, Cmd+Shift+G lets you paste the path",
        Os::Windows => "in the folder dialog, paste the path into the address bar",
        Os::Linux => "in the folder dialog, Ctrl+L lets you paste the path",
    };
    writeln!(
        out,
        "\nOne step is left, in Chrome (or Edge, Brave...):\n  \
         1. Open chrome://extensions and turn on \"Developer mode\" (top right).\n  \
         2. Click \"Load unpacked\" and choose this folder ({paste}):\n       {}\n\
         Then restart your MCP client. `tabwire doctor` checks that everything works.\n\
         Firefox instead: `tabwire extension install --browser firefox DIR`, then about:debugging\n\
         → This Firefox → Load Temporary Add-on → DIR/manifest.json (README: Firefox).",
        extension_dir.display()
    )?;
    Ok((out, all_ok))
}

/// Copies `binary` to `installed` unless it is that file or already holds the same bytes (a
/// setup run again writes nothing). The copy goes through a temporary file and a rename, so a
/// tabwire running from `installed` keeps its old file; on Windows, where a running program's file
/// cannot be replaced, the old one is first renamed aside. Returns whether it copied.
fn install_binary(binary: &Path, installed: &Path) -> anyhow::Result<bool> {
    let same_file = installed
        .canonicalize()
        .is_ok_and(|i| binary.canonicalize().is_ok_and(|b| b == i));
    if same_file {
        return Ok(false);
    }
    let bytes = std::fs::read(binary).with_context(|| format!("reading {}", binary.display()))?;
    if std::fs::read(installed).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    let dir = installed
        .parent()
        .context("the install path has a folder")?;
    // Private like every folder of Tabwire's (it is often the first one setup makes, so it decides
    // the owner-only ACL of Tabwire's folder on Windows).
    crate::user_dirs::create_private_dir(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let tmp = installed.with_extension("tabwire.tmp");
    std::fs::write(&tmp, &bytes).with_context(|| format!("writing {}", tmp.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    }
    if cfg!(windows) && installed.exists() {
        let aside = installed.with_extension("old.exe");
        let _ = std::fs::remove_file(&aside);
        std::fs::rename(installed, &aside)
            .with_context(|| format!("moving the old {} aside", installed.display()))?;
    }
    std::fs::rename(&tmp, installed)
        .with_context(|| format!("replacing {}", installed.display()))?;
    Ok(true)
}

/// Removes an earlier setup's Tabwire entry from `file` (kept as a backup), if it has one.
fn drop_entry(client: Client, file: &Path, dry: bool, out: &mut String) -> anyhow::Result<()> {
    let Ok(before) = std::fs::read_to_string(file) else {
        return Ok(());
    };
    let Some(after) = clients::remove_entry(client, &before)
        .with_context(|| format!("{} was left as it is", file.display()))?
    else {
        return Ok(());
    };
    if dry {
        writeln!(
            out,
            "  {:<15} would remove the `tabwire` server from {}",
            "",
            file.display()
        )?;
        return Ok(());
    }
    let backup = PathBuf::from(format!("{}{BACKUP_SUFFIX}", file.display()));
    std::fs::copy(file, &backup).with_context(|| format!("backing up {}", file.display()))?;
    write_keeping_permissions(file, &after)?;
    writeln!(
        out,
        "  {:<15} removed the `tabwire` server an earlier setup added to {} (backup: {})",
        "",
        file.display(),
        backup.display()
    )?;
    Ok(())
}

/// Adds or updates Tabwire in one client's config (or, in a dry run, prints the diff).
fn configure(
    client: Client,
    file: &Path,
    launch: &Launch,
    dry: bool,
    out: &mut String,
) -> anyhow::Result<()> {
    let before = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    let edit = clients::edit(client, before.as_deref(), launch)
        .with_context(|| format!("{} was left as it is", file.display()))?;
    let what = match edit.change {
        Change::Unchanged => {
            writeln!(
                out,
                "  {:<15} already set up ({})",
                client.name(),
                file.display()
            )?;
            return Ok(());
        }
        Change::Created => "create",
        Change::Added => "add Tabwire to",
        Change::Updated => "update Tabwire in",
    };
    if dry {
        writeln!(
            out,
            "  {:<15} would {what} {}:",
            client.name(),
            file.display()
        )?;
        for line in clients::diff(file, before.as_deref(), &edit.text).lines() {
            writeln!(out, "      {line}")?;
        }
        return Ok(());
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut backup_note = String::new();
    if before.is_some() {
        let backup = PathBuf::from(format!("{}{BACKUP_SUFFIX}", file.display()));
        std::fs::copy(file, &backup).with_context(|| format!("backing up {}", file.display()))?;
        backup_note = format!(" (backup: {})", backup.display());
    }
    write_keeping_permissions(file, &edit.text)?;
    let done = match edit.change {
        Change::Created => "created",
        Change::Added => "added Tabwire to",
        _ => "updated Tabwire in",
    };
    writeln!(
        out,
        "  {:<15} {done} {}{backup_note}",
        client.name(),
        file.display()
    )?;
    Ok(())
}

/// Replaces `file` with `text` through a temporary file and a rename, with the old file's
/// permissions (Claude Code's config, for one, is private).
fn write_keeping_permissions(file: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = PathBuf::from(format!("{}.tabwire.tmp", file.display()));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    if let Ok(meta) = std::fs::metadata(file) {
        std::fs::set_permissions(&tmp, meta.permissions())?;
    }
    std::fs::rename(&tmp, file).with_context(|| format!("replacing {}", file.display()))
}

/// The entry to paste by hand when a config could not be edited.
fn manual_entry(client: Client, launch: &Launch) -> String {
    let edit = clients::edit(client, None, launch).expect("a new config is always written");
    edit.text
        .lines()
        .map(|line| format!("      {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::ConnectionArgs;

    fn args(dir: &Path, dry_run: bool) -> SetupArgs {
        SetupArgs {
            connection: ConnectionArgs {
                port: DEFAULT_PORT,
                secret_file: None,
            },
            extension_dir: Some(dir.join("ext")),
            dry_run,
        }
    }

    /// Writes `text` as `client`'s config file, its folder first: the client is installed.
    fn write_config(dirs: &UserDirs, client: Client, text: &str) -> PathBuf {
        let file = client.config_file(dirs);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        file
    }

    #[test]
    fn setup_configures_the_installed_clients_once() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = crate::extension::tests::user_in(dir.path());
        let other = r#"{"mcpServers": {"other": {"command": "x"}}}"#;
        let desktop = write_config(&dirs, Client::ClaudeDesktop, other);
        std::fs::create_dir_all(dirs.home.join(".cursor")).unwrap();
        let binary = dir.path().join("download/tabwire");
        std::fs::create_dir_all(binary.parent().unwrap()).unwrap();
        std::fs::write(&binary, "the binary").unwrap();
        let installed = dirs.installed_binary();

        let (dry, ok) = setup(&dirs, &args(dir.path(), true), &binary).unwrap();
        assert!(ok, "{dry}");
        assert!(dry.contains("would add Tabwire to"), "{dry}");
        assert!(
            !dirs.secret().exists() && !dir.path().join("ext").exists(),
            "dry run wrote"
        );
        assert!(!Client::Cursor.config_file(&dirs).exists());

        let (report, ok) = setup(&dirs, &args(dir.path(), false), &binary).unwrap();
        assert!(ok, "{report}");
        assert!(report.contains("Claude Code     not found"), "{report}");
        assert!(report.contains("Load unpacked"), "{report}");
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&desktop).unwrap()).unwrap();
        assert_eq!(written["mcpServers"]["other"]["command"], "x");
        assert_eq!(
            written["mcpServers"]["tabwire"]["command"],
            installed.display().to_string()
        );
        assert_eq!(std::fs::read(&installed).unwrap(), b"the binary");
        assert!(report.contains(&format!("Binary: {} (copied)", installed.display())));
        let backup =
            std::fs::read_to_string(format!("{}{BACKUP_SUFFIX}", desktop.display())).unwrap();
        assert!(
            !backup.contains("tabwire"),
            "the backup is the file before the change"
        );
        assert!(Client::Cursor.config_file(&dirs).exists());

        let (again, _) = setup(&dirs, &args(dir.path(), false), &binary).unwrap();
        assert_eq!(again.matches("already set up").count(), 2, "{again}");
        assert!(again.contains("(up to date)"), "{again}");
    }

    #[test]
    fn a_broken_config_is_reported_with_the_entry_to_add_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = crate::extension::tests::user_in(dir.path());
        let cursor = write_config(&dirs, Client::Cursor, "{ not json");
        let binary = dir.path().join("tabwire");
        std::fs::write(&binary, "the binary").unwrap();
        let (report, ok) = setup(&dirs, &args(dir.path(), false), &binary).unwrap();
        assert!(!ok);
        assert!(report.contains("Cursor          NOT UPDATED"), "{report}");
        let command = format!(
            "\"command\": {:?}",
            dirs.installed_binary().display().to_string()
        );
        assert!(report.contains(&command), "{report}");
        assert_eq!(std::fs::read_to_string(&cursor).unwrap(), "{ not json");
    }

    #[test]
    fn windows_verbatim_prefixes_are_dropped_from_drive_paths_only() {
        assert_eq!(
            without_verbatim_prefix(PathBuf::from(r"\\?\C:\Users\ann\tabwire.exe")),
            PathBuf::from(r"C:\Users\ann\tabwire.exe")
        );
        let unc = PathBuf::from(r"\\?\UNC\server\share\tabwire.exe");
        assert_eq!(without_verbatim_prefix(unc.clone()), unc);
        assert_eq!(
            without_verbatim_prefix(PathBuf::from("/usr/bin/tabwire")),
            PathBuf::from("/usr/bin/tabwire")
        );
    }

    #[test]
    fn claude_desktop_with_the_mcpb_installed_gets_no_second_entry() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = crate::extension::tests::user_in(dir.path());
        let desktop = Client::ClaudeDesktop.config_file(&dirs);
        let bundle = desktop
            .parent()
            .unwrap()
            .join("Claude Extensions")
            .join("local.mcpb.tabwire");
        std::fs::create_dir_all(&bundle).unwrap();
        std::fs::write(bundle.join("manifest.json"), r#"{"name": "tabwire"}"#).unwrap();
        let before = r#"{"mcpServers": {"files": {"command": "npx"}, "tabwire": {"command": "/old/tabwire"}}}"#;
        std::fs::write(&desktop, before).unwrap();
        let binary = dir.path().join("tabwire");
        std::fs::write(&binary, "the binary").unwrap();
        let (report, ok) = setup(&dirs, &args(dir.path(), false), &binary).unwrap();
        assert!(ok, "{report}");
        assert!(
            report.contains("has Tabwire installed as an extension (.mcpb"),
            "{report}"
        );
        assert!(
            report.contains("removed the `tabwire` server an earlier setup added"),
            "{report}"
        );
        let after: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&desktop).unwrap()).unwrap();
        assert_eq!(
            after,
            serde_json::json!({"mcpServers": {"files": {"command": "npx"}}})
        );
        let (again, ok) = setup(&dirs, &args(dir.path(), false), &binary).unwrap();
        assert!(ok && !again.contains("removed"), "{again}");
    }
}
