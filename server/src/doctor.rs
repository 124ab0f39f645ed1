//! `tabwire doctor`: every check of an installation, each printed with what it found and, when
//! something is wrong, the fix; exit status 1 when anything is. The checks:
//! - the pairing secret exists;
//! - the port: the one `--port`/`TABWIRE_PORT` names, else the one the set-up clients start
//!   tabwire with (`setup --port N` writes it there), so no fix it prints breaks a working setup;
//! - each MCP client set up for Tabwire starts a binary that exists (and at least one is set up),
//!   and the adapter folders its `--adapters` names (and `doctor --adapters`) have no errors;
//! - the user adapter folder (where `site_save` and the popup's recorder write; a client's
//!   `--user-adapters` moves it) is there or can be made, is writable, and each file in it loads;
//! - each extension folder this user paired holds this binary's version and pairing;
//! - the port: a tabwire hub answers there (else doctor listens there itself for a few seconds,
//!   so an extension that is trying to connect shows up), or another program holds it;
//! - a browser is connected, with this binary's extension version, and no extension tried a wrong
//!   pairing secret; how many tabs offer adapter tools (none is fine: page tools work on any
//!   allowed site).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{DEFAULT_PORT, DoctorArgs};
use crate::clients::{self, Client};
use crate::diagnostics::{self, Report};
use crate::extension;
use crate::hub::TabInfo;
use crate::pairing::Secret;
use crate::peer::{self, ConnectError, StatusError};
use crate::user_dirs::UserDirs;

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub ok: bool,
    pub what: String,
    pub fix: Option<String>,
}

fn ok(what: impl Into<String>) -> Finding {
    Finding {
        ok: true,
        what: what.into(),
        fix: None,
    }
}

fn problem(what: impl Into<String>, fix: impl Into<String>) -> Finding {
    Finding {
        ok: false,
        what: what.into(),
        fix: Some(fix.into()),
    }
}

const RELOAD: &str = "then reload Tabwire in chrome://extensions (the ⟳ icon on its card)";

pub fn run(args: &DoctorArgs) -> ExitCode {
    let Some(dirs) = UserDirs::from_env() else {
        eprintln!("tabwire doctor: cannot tell where this user's folders are (is HOME set?)");
        return ExitCode::FAILURE;
    };
    let binary = crate::setup::current_binary().unwrap_or_else(|_| PathBuf::from("tabwire"));
    println!("tabwire {} at {}", extension::VERSION, binary.display());
    let mut findings = Vec::new();
    let secret_path = args
        .connection
        .secret_file
        .clone()
        .unwrap_or_else(|| dirs.secret());
    let secret = check_secret(&secret_path, &mut findings);
    #[cfg(windows)]
    check_owner_only(&[&secret_path, &dirs.tabwire_config()], &mut findings);
    let folders = check_clients(&dirs, &mut findings, args.adapter_dirs.clone());
    let mut args = args.clone();
    args.connection.port = port_to_check(
        port_given(),
        args.connection.port,
        &folders.ports,
        &mut findings,
    );
    let args = &args;
    check_extension_folders(&dirs, args.connection.port, secret.as_ref(), &mut findings);
    if let Some(secret) = &secret {
        check_browser(args, secret, &mut findings);
    }
    let others: Vec<PathBuf> = (folders.adapters.iter())
        .filter(|dir| !folders.user_adapters.contains(dir))
        .cloned()
        .collect();
    check_adapters(&others, &mut findings);
    for dir in &folders.user_adapters {
        findings.push(check_user_adapters(dir));
    }
    findings.push(check_grants(&dirs));
    findings.push(ok(format!(
        "files are uploaded only from {} (page_act's upload, adapters' upload steps; \
         --uploads-dir or TABWIRE_UPLOADS_DIR in the client's config moves it)",
        std::env::var_os("TABWIRE_UPLOADS_DIR")
            .map_or_else(|| dirs.uploads(), PathBuf::from)
            .display()
    )));
    findings.push(ok(format!(
        "browser_downloads saves into {} (--downloads-dir or TABWIRE_DOWNLOADS_DIR in the \
         client's config moves it)",
        std::env::var_os("TABWIRE_DOWNLOADS_DIR")
            .map_or_else(|| dirs.downloads(), PathBuf::from)
            .display()
    )));
    let (text, all_well) = render(&findings);
    print!("{text}");
    if all_well {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The report's text, and whether all is well.
pub fn render(findings: &[Finding]) -> (String, bool) {
    let mut out = String::new();
    for finding in findings {
        let mark = if finding.ok { "ok  " } else { "FAIL" };
        let _ = writeln!(out, "{mark} {}", finding.what);
        if let Some(fix) = &finding.fix {
            let _ = writeln!(out, "     fix: {fix}");
        }
    }
    let failed = findings.iter().filter(|f| !f.ok).count();
    match failed {
        0 => out.push_str("All is well.\n"),
        1 => out.push_str("1 problem found.\n"),
        n => {
            let _ = writeln!(out, "{n} problems found.");
        }
    }
    (out, failed == 0)
}

fn check_secret(path: &Path, findings: &mut Vec<Finding>) -> Option<Secret> {
    match std::fs::read_to_string(path) {
        Ok(text) => match Secret::parse(text.trim()) {
            Some(secret) => {
                findings.push(ok(format!("pairing secret: {}", path.display())));
                Some(secret)
            }
            None => {
                findings.push(problem(
                    format!("{} does not hold a pairing secret (64 hex characters)", path.display()),
                    format!(
                        "delete it, then run `tabwire setup` (a new secret; the extension is paired \
                         again), {RELOAD}"
                    ),
                ));
                None
            }
        },
        Err(_) => {
            findings.push(problem(
                format!(
                    "no pairing secret at {}: Tabwire was never set up for this user",
                    path.display()
                ),
                "run `tabwire setup`",
            ));
            None
        }
    }
}

/// Windows: whether the secret and Tabwire's folder are owner-only, from their DACL read back
/// (the `owner-only` crate; on Unix the files are created 0600 and the secret's mode is warned about).
#[cfg(windows)]
fn check_owner_only(paths: &[&Path], findings: &mut Vec<Finding>) {
    for path in paths.iter().filter(|p| p.exists()) {
        let shown = path.display();
        // A folder's grant is inherited by what is created in it (icacls refuses OI/CI on a file).
        let rights = if path.is_dir() { "(OI)(CI)F" } else { "F" };
        let fix = format!("icacls \"{shown}\" /inheritance:r /grant:r \"%USERNAME%:{rights}\"");
        findings.push(match owner_only::describe(path) {
            Ok((others, sddl)) if others.is_empty() => {
                ok(format!("owner-only access: {shown} ({sddl})"))
            }
            Ok((others, sddl)) => problem(
                format!(
                    "{shown} is readable by others ({}): its access list is {sddl}",
                    others.join(", ")
                ),
                fix,
            ),
            Err(e) => problem(format!("cannot read the access list of {shown}: {e}"), fix),
        });
    }
}

/// Whether the person named the port (`--port`, `TABWIRE_PORT`), rather than left the default.
fn port_given() -> bool {
    std::env::var_os("TABWIRE_PORT").is_some()
        || std::env::args().any(|a| a == "--port" || a.starts_with("--port="))
}

/// The port to check: the one every set-up client starts tabwire with (a `setup --port N` install
/// must not be told to pair for the default port: that breaks it), else the one named or the
/// default. A named port the clients do not use, and clients that disagree, are problems of their own.
fn port_to_check(given: bool, port: u16, client_ports: &[u16], findings: &mut Vec<Finding>) -> u16 {
    let mut distinct: Vec<u16> = client_ports.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    match distinct.as_slice() {
        [] => port,
        // What works is checked: advice for the port asked about would re-pair a working setup.
        [only] if given && *only != port => {
            findings.push(problem(
                format!(
                    "you asked about port {port}, but your MCP clients start tabwire on port \
                     {only}: port {only} is checked below"
                ),
                format!(
                    "run `tabwire doctor` without --port, or `tabwire setup --port {port}` to move \
                     everything to port {port}"
                ),
            ));
            *only
        }
        [only] => *only,
        several => {
            let shown: Vec<String> = several.iter().map(u16::to_string).collect();
            findings.push(problem(
                format!("your MCP clients start tabwire on different ports ({}); they cannot share one browser", shown.join(", ")),
                format!("run `tabwire setup --port {port}` (it points every client at one port)"),
            ));
            port
        }
    }
}

/// The adapter folders the clients' Tabwire entries name.
struct Folders {
    /// `doctor --adapters`, and each entry's `--adapters`.
    adapters: Vec<PathBuf>,
    /// Each entry's `--user-adapters`, or the default one when none names it.
    user_adapters: Vec<PathBuf>,
    /// Each entry's port (`--port`, else the default).
    ports: Vec<u16>,
}

/// Checks each client's Tabwire entry; returns the adapter folders to check.
fn check_clients(dirs: &UserDirs, findings: &mut Vec<Finding>, extra: Vec<PathBuf>) -> Folders {
    let mut folders = Folders {
        adapters: extra,
        user_adapters: Vec::new(),
        ports: Vec::new(),
    };
    let mut set_up = 0;
    for client in Client::ALL {
        let file = client.config_file(dirs);
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Some(launch) = clients::find_entry(client, &text) else {
            continue;
        };
        set_up += 1;
        let mut user_adapters = dirs.adapters();
        let mut port = DEFAULT_PORT;
        let mut args = launch.args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--port" => {
                    if let Some(p) = args.next().and_then(|p| p.parse().ok()) {
                        port = p;
                    }
                }
                "--adapters" => folders.adapters.extend(args.next().map(PathBuf::from)),
                "--user-adapters" => {
                    if let Some(dir) = args.next() {
                        user_adapters = PathBuf::from(dir);
                    }
                }
                _ => {}
            }
        }
        folders.ports.push(port);
        if !folders.user_adapters.contains(&user_adapters) {
            folders.user_adapters.push(user_adapters);
        }
        if launch.command.is_file() {
            findings.push(ok(format!(
                "{} starts {launch} ({})",
                client.name(),
                file.display()
            )));
        } else {
            findings.push(problem(
                format!(
                    "{} starts {}, which does not exist ({})",
                    client.name(),
                    launch.command.display(),
                    file.display()
                ),
                "run `tabwire setup` with the tabwire you want to use (it points every client at itself)",
            ));
        }
    }
    if let Some(bundle) = clients::desktop_extension(dirs) {
        set_up += 1;
        findings.push(ok(format!(
            "Claude Desktop has Tabwire installed as an extension (.mcpb, in {})",
            bundle.display()
        )));
    }
    if set_up == 0 {
        findings.push(problem(
            "no MCP client (Claude Desktop, Claude Code, Cursor, VS Code) is set up to start tabwire",
            "run `tabwire setup`, or add `tabwire mcp` to your client's MCP servers by hand",
        ));
    }
    if folders.user_adapters.is_empty() {
        folders.user_adapters.push(dirs.adapters());
    }
    folders
}

fn check_extension_folders(
    dirs: &UserDirs,
    port: u16,
    secret: Option<&Secret>,
    findings: &mut Vec<Finding>,
) {
    let roots = extension::remembered(dirs);
    if roots.is_empty() {
        findings.push(problem(
            "no extension folder was written or paired for this user",
            "run `tabwire setup`, then load the folder it prints with Chrome's \"Load unpacked\"",
        ));
    }
    for root in roots {
        if let Some(finding) = check_extension_folder(&root, port, secret) {
            findings.push(finding);
        }
    }
}

/// One paired extension folder: gone (no finding: an old checkout may be deleted), a different
/// version, or a pairing for another port or secret.
fn check_extension_folder(root: &Path, port: u16, secret: Option<&Secret>) -> Option<Finding> {
    let version = extension::installed_version(root)?;
    let shown = root.display();
    if version != extension::VERSION {
        return Some(problem(
            format!(
                "the extension in {shown} is version {version}, this tabwire is {}",
                extension::VERSION
            ),
            format!("run `tabwire extension install \"{shown}\"`, {RELOAD}"),
        ));
    }
    let config = root.join(extension::PAIRING_FILE);
    let pairing: Option<serde_json::Value> = std::fs::read_to_string(&config)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let paired_port = pairing.as_ref().and_then(|p| p["port"].as_u64());
    let paired_secret = pairing
        .as_ref()
        .and_then(|p| p["secret"].as_str().map(str::to_owned));
    let repair = format!(
        "run `tabwire pair --port {port} --extension-config \"{}\"`, {RELOAD}",
        config.display()
    );
    if paired_port != Some(u64::from(port)) {
        return Some(problem(
            format!(
                "the extension in {shown} is paired for port {}, tabwire uses {port}",
                paired_port.map_or("(none)".to_owned(), |p| p.to_string())
            ),
            repair,
        ));
    }
    if let Some(secret) = secret
        && paired_secret.as_deref() != Some(secret.expose())
    {
        return Some(problem(
            format!("pairing mismatch: the extension in {shown} holds another pairing secret"),
            repair,
        ));
    }
    Some(ok(format!(
        "extension {version} in {shown}, paired for port {port}"
    )))
}

/// What the browser side looks like from the port.
struct BrowserView {
    browsers: usize,
    tabs: Vec<TabInfo>,
    report: Report,
}

fn check_browser(args: &DoctorArgs, secret: &Secret, findings: &mut Vec<Finding>) {
    let port = args.connection.port;
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            findings.push(problem(
                format!("cannot start the async runtime: {e}"),
                "report this",
            ));
            return;
        }
    };
    let view = runtime.block_on(async {
        match peer::fetch_status(port, secret).await {
            Ok(status) => {
                findings.push(ok(format!(
                    "tabwire {} (pid {}) is running on 127.0.0.1:{port}, with {} other tabwire \
                     process(es) sharing it",
                    status.hub.version,
                    status.hub.pid,
                    status.peers.len()
                )));
                Some(BrowserView {
                    browsers: status.browsers.len(),
                    tabs: status.tabs,
                    report: status.diagnostics,
                })
            }
            Err(StatusError::Connect(ConnectError::NoHub(_))) => {
                listen_for_browser(args, secret, findings).await
            }
            Err(_) => {
                findings.push(port_held(port).await);
                None
            }
        }
    });
    if let Some(view) = view {
        browser_findings(port, &view, findings);
    }
}

/// The finding for a port whose holder refused tabwire's status handshake: a tabwire with
/// another secret (it answers the extension's probe) or another program.
async fn port_held(port: u16) -> Finding {
    if answers_probe(port).await {
        problem(
            format!("a tabwire with another pairing secret holds 127.0.0.1:{port}"),
            "give doctor the same secret as that tabwire (--secret-file, as in your MCP client's \
             config), or run `tabwire setup` so that all of them use the default one",
        )
    } else if let Some((uid, false)) = crate::port_hold::listener_owner(port) {
        problem(
            format!(
                "a program of another user (uid {uid}) holds 127.0.0.1:{port}, so no browser can reach tabwire"
            ),
            format!(
                "ask that user or an administrator to stop it (`sudo lsof -i :{port}` shows which), \
                 or move Tabwire to a free port: `tabwire setup --port {}`, {RELOAD}",
                if port == DEFAULT_PORT {
                    DEFAULT_PORT + 1
                } else {
                    DEFAULT_PORT
                }
            ),
        )
    } else {
        problem(
            format!("another program (not tabwire) holds 127.0.0.1:{port}"),
            format!(
                "stop that program (`lsof -i :{port}` on Linux and macOS, `netstat -ano | findstr \
                 {port}` on Windows shows which), or move Tabwire to a free port: `tabwire setup \
                 --port {}`, {RELOAD}",
                if port == DEFAULT_PORT {
                    DEFAULT_PORT + 1
                } else {
                    DEFAULT_PORT
                }
            ),
        )
    }
}

/// Whether the port answers the extension's probe (`HEAD /`) as tabwire does (204).
async fn answers_probe(port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        stream
            .write_all(b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .await
            .ok()?;
        let mut answer = [0u8; 12];
        stream.read_exact(&mut answer).await.ok()?;
        Some(answer.ends_with(b"204"))
    };
    tokio::time::timeout(Duration::from_secs(2), exchange)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// No tabwire runs: listen on the port for `--wait-ms`, as tabwire would, to see whether the
/// extension connects (and with which secret). The port being free is checked on the way.
async fn listen_for_browser(
    args: &DoctorArgs,
    secret: &Secret,
    findings: &mut Vec<Finding>,
) -> Option<BrowserView> {
    let port = args.connection.port;
    let listener = match crate::ws::bind(port).await {
        Ok(listener) => listener,
        Err(e) => {
            findings.push(problem(
                e.to_string(),
                "run `tabwire doctor` again (the port was taken meanwhile)",
            ));
            return None;
        }
    };
    let wait = Duration::from_millis(args.wait_ms);
    findings.push(ok(format!(
        "no tabwire is running (your MCP client starts it); doctor listened on 127.0.0.1:{port} \
         itself for {:.1} s",
        wait.as_secs_f64()
    )));
    let hub = Arc::new(crate::hub::Hub::new(crate::hub::HubConfig {
        port,
        call_timeout: Duration::from_secs(5),
        instance_id: format!("doctor-{}", std::process::id()),
        adapters: crate::adapters::load_watched(&[], &[], &mut crate::adapters::LastGood::new())
            .map(|loaded| loaded.adapters)
            .unwrap_or_default(),
        grants: None,
        uploads: None,
    }));
    let policy = Arc::new(crate::auth::HandshakePolicy::new(
        crate::pairing::DEFAULT_EXTENSION_ID,
        secret.clone(),
    ));
    let server = tokio::spawn(crate::ws::serve(listener, hub.clone(), policy, None));
    let deadline = tokio::time::Instant::now() + wait;
    // Done early once a browser told its tabs, or an extension offered a wrong secret.
    while tokio::time::Instant::now() < deadline
        && !hub.browser_ready()
        && diagnostics::report().pairing_failure.is_none()
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.abort();
    Some(BrowserView {
        browsers: hub.browsers().len(),
        tabs: hub.tabs(),
        report: diagnostics::report(),
    })
}

fn browser_findings(port: u16, view: &BrowserView, findings: &mut Vec<Finding>) {
    if let Some(failure) = &view.report.pairing_failure {
        findings.push(problem(
            format!(
                "pairing mismatch: {} tried to connect with the wrong pairing secret {} ({} time(s))",
                failure.origin.as_deref().unwrap_or("a client without an Origin"),
                diagnostics::ago(failure.at_unix_ms),
                failure.count
            ),
            format!(
                "run `tabwire pair --port {port} --extension-config \"<the folder you loaded>/{}\"` \
                 (or `tabwire setup` if you loaded the folder it wrote), {RELOAD}",
                extension::PAIRING_FILE
            ),
        ));
    }
    if view.browsers == 0 {
        findings.push(problem(
            "no browser is connected",
            "open Chrome with the Tabwire extension loaded (chrome://extensions: Tabwire is on); \
             its toolbar popup says why it cannot connect",
        ));
        return;
    }
    match &view.report.extension_version {
        Some(version) if version != extension::VERSION => findings.push(problem(
            format!(
                "the connected extension is version {version}, this tabwire is {}",
                extension::VERSION
            ),
            format!("run `tabwire setup` (or `tabwire extension install <the folder you loaded>`), {RELOAD}"),
        )),
        _ => findings.push(ok(format!("{} browser(s) connected", view.browsers))),
    }
    let with_tools: Vec<&TabInfo> = view.tabs.iter().filter(|t| !t.tools.is_empty()).collect();
    if with_tools.is_empty() {
        // Not a problem: page tools (the main use) work on any site the person allows.
        findings.push(ok(
            "no open tab offers adapter tools right now; page tools work on any site you allow \
             (`tabwire grants` lists them), and a site an adapter covers adds its own tools",
        ));
    } else {
        let tools: usize = with_tools.iter().map(|t| t.tools.len()).sum();
        findings.push(ok(format!(
            "{} tab(s) offer {tools} tool(s)",
            with_tools.len()
        )));
    }
}

/// Where page tools are allowed (the grants file must be readable), and where the audit log is.
fn check_grants(dirs: &UserDirs) -> Finding {
    let grants = crate::grants::Grants::new(dirs.grants());
    let audit = dirs.audit_log();
    match grants.all() {
        Ok(all) => ok(format!(
            "page tools allowed on {} site(s) ({}; `tabwire grants` lists them); audit log of tool \
             calls: {} (`tabwire audit`)",
            all.len(),
            grants.path().display(),
            audit.display()
        )),
        Err(e) => problem(
            e.to_string(),
            format!(
                "fix or delete {} (then allow sites again with `tabwire allow ORIGIN`)",
                grants.path().display()
            ),
        ),
    }
}

fn check_adapters(dirs: &[PathBuf], findings: &mut Vec<Finding>) {
    if dirs.is_empty() {
        return;
    }
    let report = crate::adapters::check(dirs);
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    if report.problems.is_empty() {
        findings.push(ok(format!(
            "adapters: {} file(s) in {} check out",
            report.files,
            shown.join(", ")
        )));
        return;
    }
    let mut what = format!(
        "adapter files with errors ({} problem(s)):",
        report.problems.len()
    );
    for problem in &report.problems {
        let _ = write!(what, "\n       {problem}");
    }
    findings.push(problem(
        what,
        format!(
            "correct them (until then those files are skipped); `tabwire adapters check {}` checks again",
            shown.join(" ")
        ),
    ));
}

/// The user adapter folder: where `site_save` and the popup's recorder write, and tabwire loads
/// from at start. It must be a folder this user can write (or, while missing, can create), and
/// each file in it must load: a broken one is skipped, its tools missing.
fn check_user_adapters(dir: &Path) -> Finding {
    let shown = dir.display();
    let elsewhere = "or point `--user-adapters DIR` in your MCP client's tabwire entry at a folder \
                     you can write";
    if !dir.exists() {
        return match can_create(dir) {
            Ok(()) => ok(format!(
                "your adapter folder {shown} does not exist yet; tabwire creates it when it starts \
                 (site_save and the popup's recorder write there)"
            )),
            Err(e) => problem(
                format!("your adapter folder {shown} cannot be created: {e}"),
                format!("make it yourself (`mkdir -p \"{shown}\"`), {elsewhere}"),
            ),
        };
    }
    if !dir.is_dir() {
        return problem(
            format!("your adapter folder {shown} is a file, not a folder"),
            format!("move that file away, {elsewhere}"),
        );
    }
    if let Err(e) = probe_write(dir) {
        return problem(
            format!("your adapter folder {shown} is not writable: {e}"),
            format!("give yourself write access to it (`chmod u+w \"{shown}\"`), {elsewhere}"),
        );
    }
    let report = crate::adapters::check(&[dir.to_owned()]);
    // One line a file: its first error (`adapters check` lists them all).
    let mut failing: Vec<&crate::adapters::FileProblem> = Vec::new();
    for problem in &report.problems {
        if !failing.iter().any(|f| f.file == problem.file) {
            failing.push(problem);
        }
    }
    if failing.is_empty() {
        return ok(format!(
            "your adapter folder {shown} is writable; its {} file(s) load",
            report.files
        ));
    }
    let mut what = format!(
        "{} file(s) in your adapter folder {shown} fail to load (their tools are missing):",
        failing.len()
    );
    for first in failing {
        let _ = write!(what, "\n       {first}");
    }
    problem(
        what,
        format!("correct them; `tabwire adapters check \"{shown}\"` lists every error"),
    )
}

/// Whether `dir`, missing, can be made: its nearest existing ancestor is a folder this user can
/// write (tried with a folder made and removed at once).
fn can_create(dir: &Path) -> std::io::Result<()> {
    let Some(existing) = dir.ancestors().skip(1).find(|a| a.exists()) else {
        return Err(std::io::Error::other("none of its parent folders exists"));
    };
    if !existing.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is a file, not a folder",
            existing.display()
        )));
    }
    let probe = existing.join(format!(".tabwire-doctor-{}", std::process::id()));
    std::fs::create_dir(&probe)?;
    std::fs::remove_dir(&probe)
}

/// Whether this user can write in `dir` (tried with a file made and removed at once: permission
/// bits do not say it for root, ACLs or read-only mounts).
fn probe_write(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".tabwire-doctor-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grants_and_the_audit_log_are_named_and_a_damaged_grants_file_is_a_problem() {
        let home = tempfile::tempdir().unwrap();
        let dirs = UserDirs {
            os: crate::user_dirs::Os::Linux,
            home: home.path().to_owned(),
            config: home.path().join("config"),
            data: home.path().join("data"),
        };
        let finding = check_grants(&dirs);
        assert!(finding.fix.is_none(), "{finding:?}");
        assert!(finding.what.contains("0 site(s)") && finding.what.contains("audit.jsonl"));
        std::fs::create_dir_all(dirs.tabwire_config()).unwrap();
        std::fs::write(dirs.grants(), "garbage").unwrap();
        let finding = check_grants(&dirs);
        assert!(finding.fix.unwrap().contains("grants.json"));
    }

    #[test]
    fn the_user_adapter_folder_is_made_or_writable_and_each_broken_file_named_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("config").join("adapters");
        let missing = check_user_adapters(&dir);
        assert!(
            missing.ok && missing.what.contains("does not exist yet"),
            "{missing:?}"
        );
        assert!(
            !dir.exists() && !tmp.path().join("config").exists(),
            "doctor made nothing"
        );
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bad.json"), "{\"name\": 3,\n \"match\": 4}").unwrap();
        std::fs::write(dir.join("worse.json"), "not json").unwrap();
        let broken = check_user_adapters(&dir);
        assert!(!broken.ok, "{broken:?}");
        assert!(
            broken.what.starts_with("2 file(s) in your adapter folder"),
            "{broken:?}"
        );
        assert_eq!(broken.what.matches("bad.json").count(), 1, "{broken:?}");
        assert_eq!(broken.what.matches("worse.json").count(), 1, "{broken:?}");
        assert!(broken.fix.unwrap().contains("tabwire adapters check"));
        std::fs::remove_file(dir.join("bad.json")).unwrap();
        std::fs::remove_file(dir.join("worse.json")).unwrap();
        let fine = check_user_adapters(&dir);
        assert!(
            fine.ok && fine.what.ends_with("is writable; its 0 file(s) load"),
            "{fine:?}"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "the probe is gone"
        );
        let file = tmp.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        let on_file = check_user_adapters(&file);
        assert!(
            !on_file.ok && on_file.what.ends_with("is a file, not a folder"),
            "{on_file:?}"
        );
        let under_file = check_user_adapters(&file.join("adapters"));
        assert!(
            !under_file.ok && under_file.what.contains("cannot be created"),
            "{under_file:?}"
        );
        assert!(under_file.fix.unwrap().contains("--user-adapters DIR"));
    }

    #[test]
    fn the_report_says_each_fix_and_whether_all_is_well() {
        let (text, well) = render(&[ok("pairing secret: /s")]);
        assert!(well);
        assert_eq!(text, "ok   pairing secret: /s\nAll is well.\n");
        let (text, well) = render(&[ok("a"), problem("no browser is connected", "open Chrome")]);
        assert!(!well);
        assert_eq!(
            text,
            "ok   a\nFAIL no browser is connected\n     fix: open Chrome\n1 problem found.\n"
        );
    }

    #[test]
    fn extension_folders_are_checked_for_version_and_pairing() {
        let dir = tempfile::tempdir().unwrap();
        let user = crate::extension::tests::user_in(dir.path());
        let root = dir.path().join("ext");
        let secret = Secret::parse(&"ab".repeat(32)).unwrap();
        let other = Secret::parse(&"cd".repeat(32)).unwrap();
        crate::extension::install(
            &user,
            &root,
            4000,
            &secret,
            crate::extension::Browser::Chrome,
        )
        .unwrap();
        assert!(
            check_extension_folder(&root, 4000, Some(&secret))
                .unwrap()
                .ok
        );
        let wrong_port = check_extension_folder(&root, 4001, Some(&secret)).unwrap();
        assert!(
            wrong_port
                .what
                .contains("paired for port 4000, tabwire uses 4001"),
            "{wrong_port:?}"
        );
        let mismatch = check_extension_folder(&root, 4000, Some(&other)).unwrap();
        assert!(
            mismatch.what.starts_with("pairing mismatch"),
            "{mismatch:?}"
        );
        assert!(
            mismatch
                .fix
                .unwrap()
                .contains("tabwire pair --port 4000 --extension-config")
        );
        let manifest = root.join("manifest.json");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, text.replace(extension::VERSION, "0.0.1")).unwrap();
        let old = check_extension_folder(&root, 4000, Some(&secret)).unwrap();
        assert!(old.what.contains("is version 0.0.1"), "{old:?}");
        assert!(check_extension_folder(&dir.path().join("gone"), 4000, None).is_none());
    }

    #[test]
    fn the_port_checked_is_the_clients_unless_one_is_named() {
        let mut findings = Vec::new();
        assert_eq!(
            port_to_check(false, DEFAULT_PORT, &[], &mut findings),
            DEFAULT_PORT
        );
        assert_eq!(
            port_to_check(false, DEFAULT_PORT, &[4000, 4000], &mut findings),
            4000
        );
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(port_to_check(true, 4001, &[4001], &mut findings), 4001);
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(port_to_check(true, 4001, &[4000], &mut findings), 4000);
        assert!(
            findings[0].what.contains("start tabwire on port 4000"),
            "{findings:?}"
        );
        findings.clear();
        port_to_check(false, DEFAULT_PORT, &[4000, 4002], &mut findings);
        assert!(
            findings[0].what.contains("different ports (4000, 4002)"),
            "{findings:?}"
        );
    }
}
