//! `tabwire`: the entry point. Parses the command line, sets up logging (stderr only: stdout
//! belongs to the MCP stdio protocol), and runs `mcp` (the MCP server on stdio or, with
//! `--http`, Streamable HTTP, plus the browser WebSocket, or a peer of the tabwire that has it),
//! `setup`, `doctor`, `extension install`, `pair` (write the extension's pairing file),
//! `adapters check`, or `status` (ask the hub who is connected).

mod adapter_store;
mod adapters;
mod audit;
mod auth;
mod browser_tools;
mod cli;
mod clients;
mod content_frame;
mod diagnostics;
mod doctor;
mod downloads;
mod extension;
mod firefox_pin;
mod grant_sync;
mod grants;
mod handoff;
mod health;
mod http;
mod hub;
mod listen;
mod log_bounds;
mod mcp;
mod mcpb;
mod page_tools;
mod pairing;
mod peer;
mod permission;
mod port_hold;
mod preauth;
mod recorder;
mod setup;
mod site_state;
#[cfg(test)]
mod test_support;
mod uploads;
mod user_dirs;
mod ws;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use tracing_subscriber::EnvFilter;

use crate::cli::{
    AdaptersCommand, AuditArgs, Cli, Command, ConnectionArgs, ExtensionCommand, GrantArgs, McpArgs,
    PairArgs, StatusArgs,
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `setup` and `doctor` talk to a person on the terminal: their report is the output, and
    // progress lines (`INFO tabwire::pairing ...`) would only bury it. RUST_LOG still wins.
    let default_level = match cli.command {
        Command::Setup(_) | Command::Doctor(_) => "warn",
        Command::Mcp(_)
        | Command::Extension(_)
        | Command::Pair(_)
        | Command::Status(_)
        | Command::Adapters(_)
        | Command::Allow(_)
        | Command::Revoke(_)
        | Command::Grants
        | Command::Audit(_)
        | Command::McpbManifest => "info",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level)),
        )
        .with_writer(log_bounds::BoundedStderr::default())
        .with_ansi(false)
        .init();
    let outcome = match cli.command {
        Command::Mcp(args) => run_mcp(args),
        Command::Pair(args) => run_pair(args),
        Command::Setup(args) => setup::run(&args),
        Command::Doctor(args) => return doctor::run(&args),
        Command::Extension(ExtensionCommand::Install {
            dir,
            browser,
            connection,
        }) => run_extension_install(dir, browser, &connection),
        Command::Adapters(AdaptersCommand::Check { paths }) => return run_check(&paths),
        Command::Adapters(AdaptersCommand::Test(args)) => return run_adapters_test(&args),
        Command::Status(args) => run_status(args),
        Command::Allow(args) => run_grant(&args, true),
        Command::Revoke(args) => run_grant(&args, false),
        Command::Grants => run_grants(),
        Command::Audit(args) => run_audit(&args),
        Command::McpbManifest => {
            println!("{:#}", mcpb::manifest());
            Ok(())
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

fn secret_path(connection: &ConnectionArgs) -> anyhow::Result<std::path::PathBuf> {
    match &connection.secret_file {
        Some(path) => Ok(path.clone()),
        None => Ok(pairing::default_secret_path()?),
    }
}

fn user_dirs() -> anyhow::Result<user_dirs::UserDirs> {
    user_dirs::UserDirs::from_env()
        .context("cannot tell where this user's folders are (is HOME set?)")
}

fn run_pair(args: PairArgs) -> anyhow::Result<()> {
    let secret_path = secret_path(&args.connection)?;
    let secret = pairing::load_or_create_secret(&secret_path)?;
    extension::pair(
        &user_dirs()?,
        &args.extension_config,
        args.connection.port,
        &secret,
    )?;
    tracing::info!(
        config = %args.extension_config.display(),
        secret_file = %secret_path.display(),
        port = args.connection.port,
        "wrote the extension's pairing file"
    );
    Ok(())
}

fn run_extension_install(
    dir: Option<std::path::PathBuf>,
    browser: extension::Browser,
    connection: &ConnectionArgs,
) -> anyhow::Result<()> {
    let dirs = user_dirs()?;
    let root = dir.unwrap_or_else(|| dirs.default_extension());
    let secret = pairing::load_or_create_secret(&secret_path(connection)?)?;
    let secret_path = secret_path(connection)?;
    extension::install(&dirs, &root, connection.port, &secret, browser)?;
    if browser == extension::Browser::Firefox {
        // Firefox gives the add-on a new origin per profile: the next one to pair pins its own.
        firefox_pin::FirefoxPin::in_file(firefox_pin::pin_file(&secret_path))
            .forget()
            .context("forgetting the paired Firefox add-on's origin")?;
    }
    let root = std::path::absolute(&root).unwrap_or(root);
    let how = match browser {
        extension::Browser::Chrome => {
            "In Chrome: chrome://extensions → Developer mode → Load unpacked → choose that folder\n\
             (after an update there, click the reload icon on Tabwire's card instead)."
        }
        extension::Browser::Firefox => {
            "In Firefox: about:debugging → This Firefox → Load Temporary Add-on → choose that\n\
             folder's manifest.json (it stays until Firefox quits; a signed .xpi stays: README, Firefox)."
        }
    };
    println!(
        "Wrote the Tabwire extension {} to {}, paired for port {}.\n{how}",
        extension::VERSION,
        root.display(),
        connection.port
    );
    Ok(())
}

/// Problems go to stdout (they are the command's output), one per line, then a summary.
fn run_check(paths: &[std::path::PathBuf]) -> ExitCode {
    let report = adapters::check(paths);
    for problem in &report.problems {
        println!("{problem}");
    }
    for warning in &report.warnings {
        println!("warning: {warning}");
    }
    let files = report.files;
    let problems = report.problems.len();
    let warnings = match report.warnings.len() {
        0 => String::new(),
        n => format!(", {n} warning(s)"),
    };
    eprintln!("checked {files} adapter file(s): {problems} problem(s){warnings}");
    if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `tabwire adapters test`: exit 1 when a tool failed or the test could not run.
fn run_adapters_test(args: &cli::AdaptersTestArgs) -> ExitCode {
    let outcome = (|| {
        let user_adapters = match &args.user_adapters {
            Some(dir) => dir.clone(),
            None => user_dirs()?.adapters(),
        };
        let secret = pairing::load_or_create_secret(&secret_path(&args.connection)?)?;
        health::run_cli(args, user_adapters, secret)
    })();
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_status(args: StatusArgs) -> anyhow::Result<()> {
    let secret_path = secret_path(&args.connection)?;
    let text = std::fs::read_to_string(&secret_path)
        .with_context(|| format!("reading the pairing secret {}", secret_path.display()))?;
    let secret = pairing::Secret::parse(text.trim()).with_context(|| {
        format!(
            "{} does not hold a pairing secret (64 hex characters)",
            secret_path.display()
        )
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let status = runtime.block_on(peer::fetch_status(args.connection.port, &secret))?;
    print!("{}", peer::render_status(&status));
    Ok(())
}

/// `tabwire allow` (`allowing`) and `tabwire revoke`.
fn run_grant(args: &GrantArgs, allowing: bool) -> anyhow::Result<()> {
    let dirs = user_dirs()?;
    let (origin, reduced) = grants::origin_of(&args.origin)?;
    if let Some(reduced) = reduced {
        eprintln!("note: {reduced}");
    }
    let change = grants::GrantChange {
        origin: origin.to_string(),
        action: if allowing {
            grants::GrantAction::Allow
        } else {
            grants::GrantAction::Revoke
        },
        need: if args.trusted_input {
            grants::Need::TrustedInput
        } else {
            grants::Need::PageTools
        },
    };
    let what = match (change.need, change.action) {
        (grants::Need::PageTools, grants::GrantAction::Allow) => "page tools are allowed",
        (grants::Need::PageTools, grants::GrantAction::Revoke) => {
            "page tools and trusted input are no longer allowed"
        }
        (grants::Need::TrustedInput, grants::GrantAction::Allow) => {
            "page tools and trusted input are allowed"
        }
        (grants::Need::TrustedInput, grants::GrantAction::Revoke) => "trusted input is off",
    };
    let store = grants::Grants::new(dirs.grants());
    let (changed, whom) = match &args.agent {
        // Issue 28: a grant for one agent.
        Some(agent) => {
            let started = std::time::Instant::now();
            let made = store.change_for_agent(agent, &origin, change.need, allowing);
            audit::AuditLog::new(dirs.audit_log()).record(&audit::Entry {
                time: audit::now(),
                client: "cli".to_owned(),
                agent: Some(agent.clone()),
                tool: change.describe(),
                origin: Some(change.origin.clone()),
                tab: None,
                outcome: match &made {
                    Ok(_) => "ok".to_owned(),
                    Err(_) => bridge::ErrorCode::Internal.to_string(),
                },
                ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
            (made?, format!(" for agent {agent}"))
        }
        None => {
            let audit = audit::AuditLog::new(dirs.audit_log());
            (
                store.change_for(&audit, "cli", &change, None)?,
                String::new(),
            )
        }
    };
    let already = if changed { "" } else { " (already so)" };
    println!("{}: {what}{whom}{already}.", change.origin);
    Ok(())
}

/// `tabwire grants`.
fn run_grants() -> anyhow::Result<()> {
    let store = grants::Grants::new(user_dirs()?.grants());
    for skipped in store.skipped()? {
        eprintln!("warning: {skipped}");
    }
    let all = store.all()?;
    if all.is_empty() {
        println!(
            "Page tools are allowed on no site yet. Allow one with `tabwire allow ORIGIN`, in the \
             Tabwire popup, or by answering yes when your assistant asks."
        );
    }
    for (origin, grant) in &all {
        let trusted = if grant.trusted_input {
            ", trusted input on"
        } else {
            ""
        };
        println!("{origin}  page tools allowed{trusted}");
    }
    for (agent, list) in store.of_agents()? {
        for (origin, grant) in &list {
            let trusted = if grant.trusted_input {
                ", trusted input on"
            } else {
                ""
            };
            println!("{origin}  page tools allowed for agent {agent} only{trusted}");
        }
    }
    println!("({})", store.path().display());
    Ok(())
}

/// `tabwire audit`.
fn run_audit(args: &AuditArgs) -> anyhow::Result<()> {
    let log = audit::AuditLog::new(user_dirs()?.audit_log());
    let entries = log
        .last(args.lines)
        .with_context(|| format!("reading {}", log.path().display()))?;
    if entries.is_empty() {
        println!("No tool calls recorded yet.");
    }
    for entry in &entries {
        println!("{entry}");
    }
    println!("({})", log.path().display());
    Ok(())
}

fn run_mcp(mut args: McpArgs) -> anyhow::Result<()> {
    // The .mcpb bundle passes its optional "adapter folder" setting this way, empty when unset.
    if let Some(dir) = std::env::var_os("TABWIRE_ADAPTERS").filter(|d| !d.is_empty()) {
        args.adapter_dirs.push(dir.into());
    }
    let secret_path = secret_path(&args.connection)?;
    let secret = pairing::load_or_create_secret(&secret_path)?;
    let dirs = user_dirs()?;
    let (store, loaded) = adapter_store::AdapterStore::open(
        args.user_adapters
            .clone()
            .unwrap_or_else(|| dirs.adapters()),
        &args.adapter_dirs,
        &args.adapter_matches,
    )?;
    let store = Arc::new(store);
    for problem in &loaded.problems {
        tracing::error!("{problem}");
    }
    if !loaded.problems.is_empty() {
        tracing::error!("adapter files with problems were skipped; the others are loaded");
    }
    tracing::info!(
        adapters = ?loaded.adapters.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        "adapters loaded"
    );

    let port = args.connection.port;
    let hub = Arc::new(hub::Hub::new(hub::HubConfig {
        port,
        call_timeout: Duration::from_millis(args.call_timeout_ms),
        instance_id: uuid::Uuid::new_v4().to_string(),
        adapters: loaded.adapters,
        grants: Some(grants::Grants::new(dirs.grants())),
        uploads: Some(uploads::Uploads::new(match &args.uploads_dir {
            Some(dir) => dir.clone(),
            None => dirs.uploads(),
        })),
    }));
    store.serve_to(hub.adapters_server());
    if args.allow_all_origins {
        tracing::warn!("--allow-all-origins: page tools act on every site without asking");
    }
    let safeguards = Arc::new(mcp::Safeguards {
        permission: permission::Permission::new(
            grants::Grants::new(dirs.grants()),
            args.allow_all_origins,
        ),
        audit: audit::AuditLog::new(dirs.audit_log()),
        screenshots: browser_tools::Screenshots {
            dir: args
                .screenshots_dir
                .clone()
                .unwrap_or_else(|| dirs.screenshots()),
        },
        downloads: downloads::Downloads {
            dir: args
                .downloads_dir
                .clone()
                .unwrap_or_else(|| dirs.downloads()),
        },
        adapter_store: store.clone(),
    });
    let policy = Arc::new(
        auth::HandshakePolicy::new(&args.extension_id, secret.clone()).with_firefox_pin(
            firefox_pin::FirefoxPin::in_file(firefox_pin::pin_file(&secret_path)),
        ),
    );
    let marker = pairing::browser_seen_marker(&secret_path);
    let browser_expected = marker.exists();

    // One thread: every task here is short and I/O bound, and a single-threaded runtime avoids
    // cross-thread wake-ups on the call path (the machines this targets have 2 cores, and the
    // browser and the MCP client need the other).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    diagnostics::server_started();
    let served = runtime.block_on(async {
        tokio::spawn(ws::run(port, hub.clone(), policy, Some(marker), true));
        tokio::spawn(
            grant_sync::GrantKeeper {
                hub: hub.clone(),
                grants: grants::Grants::new(dirs.grants()),
                audit: audit::AuditLog::new(dirs.audit_log()),
                all_origins: args.allow_all_origins,
            }
            .run(),
        );
        tokio::spawn(
            recorder::Recorder {
                hub: hub.clone(),
                store: store.clone(),
                grants: grants::Grants::new(dirs.grants()),
                audit: audit::AuditLog::new(dirs.audit_log()),
                all_origins: args.allow_all_origins,
            }
            .run(),
        );
        tokio::spawn(store.clone().watch());
        match args.http {
            Some(addr) => http::serve_http(hub, safeguards, addr, browser_expected, secret)
                .await
                .map_err(anyhow::Error::from),
            None => mcp::serve_stdio(hub, safeguards, browser_expected)
                .await
                .map_err(anyhow::Error::from),
        }
    });
    // Do not wait for straggling tasks (an open browser socket) once stdin is closed.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served
}
