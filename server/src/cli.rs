//! The command line, parsed with clap; values are checked here so later code can trust them:
//! `tabwire mcp ...` (the MCP server), `setup` (pair, install the extension, configure the MCP
//! clients), `doctor` (what is wrong, and the fix), `extension install` (write the extension this
//! binary carries), `pair ...` (write an extension's pairing file), `adapters check ...`
//! (validate adapter files), `status` (who shares the port), `allow`/`revoke`/`grants` (where page
//! tools may act) and `audit` (the last tool calls).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::pairing::DEFAULT_EXTENSION_ID;

/// The WebSocket port when neither `--port` nor `TABWIRE_PORT` says otherwise.
pub const DEFAULT_PORT: u16 = 17373;

#[derive(Parser, Debug)]
#[command(
    name = "tabwire",
    version,
    about = "Drive websites in your own browser from MCP clients, through per-site tools."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve MCP over stdio (or Streamable HTTP with --http), and the Tabwire extension on
    /// ws://127.0.0.1:PORT.
    #[command(alias = "serve")]
    Mcp(McpArgs),
    /// Set Tabwire up for this user: the pairing secret, the extension (written out and paired),
    /// and Tabwire in the config of every MCP client found (Claude Desktop, Claude Code, Cursor,
    /// VS Code). Prints the one step left to do by hand.
    Setup(SetupArgs),
    /// Check the installation and the connection; print each problem with its fix. Exits 1 when
    /// something is wrong.
    Doctor(DoctorArgs),
    /// The Chrome extension this binary carries.
    #[command(subcommand)]
    Extension(ExtensionCommand),
    /// Create the pairing secret if needed and write the extension's pairing file.
    Pair(PairArgs),
    /// Show the tabwire process that owns the port (the hub), the other tabwire processes
    /// sharing it (peers), the connected browsers, their tabs and tools.
    Status(StatusArgs),
    /// Work with adapter files.
    #[command(subcommand)]
    Adapters(AdaptersCommand),
    /// Allow page tools (or with --trusted-input, trusted input too) on a site, e.g.
    /// `tabwire allow https://mail.example.com`.
    Allow(GrantArgs),
    /// Take back what `allow` (or the popup, or a yes to the assistant's question) allowed on a
    /// site; with --trusted-input only trusted input.
    Revoke(GrantArgs),
    /// List the sites where page tools are allowed, and where trusted input is on.
    Grants,
    /// Print the last tool calls from the audit log (time, client, tool, site, tab, outcome).
    Audit(AuditArgs),
    /// Print the manifest.json of this platform's .mcpb bundle (used by the build).
    #[command(hide = true)]
    McpbManifest,
}

#[derive(Subcommand, Debug)]
pub enum ExtensionCommand {
    /// Write the extension into DIR (default: Tabwire's folder in your data directory), paired
    /// with this tabwire, ready for Chrome's "Load unpacked".
    Install {
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The browser it is for (Firefox: the same extension with Firefox's manifest).
        #[arg(long, value_enum, default_value_t)]
        browser: crate::extension::Browser,
        #[command(flatten)]
        connection: ConnectionArgs,
    },
}

#[derive(Args, Debug, Clone)]
pub struct SetupArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Where to write the extension (default: Tabwire's folder in your data directory).
    #[arg(long, value_name = "DIR")]
    pub extension_dir: Option<PathBuf>,
    /// Show what would change (a diff of each client config) and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args, Debug, Clone)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Adapter folders to check too (those in the MCP clients' configs are checked anyway).
    #[arg(long = "adapters", value_name = "DIR")]
    pub adapter_dirs: Vec<PathBuf>,
    /// When no tabwire is running, how long to listen for the browser extension ourselves.
    #[arg(long, default_value_t = 4000, value_name = "MS")]
    pub wait_ms: u64,
}

#[derive(Args, Debug, Clone)]
pub struct StatusArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Subcommand, Debug)]
pub enum AdaptersCommand {
    /// Validate adapter files; print every problem as FILE:LINE:COLUMN: message; exit 1 if any.
    Check {
        /// Adapter files or directories (every *.json in them). Default: the built-in adapters.
        #[arg(value_name = "DIR|FILE")]
        paths: Vec<PathBuf>,
    },
    /// Health check: open each adapter's site in the connected browser (through the running
    /// tabwire, or by serving the port until the extension connects), run its read-only tools
    /// and print pass/fail with the failing step and locator; exit 1 on any failure.
    Test(AdaptersTestArgs),
}

#[derive(Args, Debug, Clone)]
pub struct AdaptersTestArgs {
    /// Test every adapter that serves this page.
    #[arg(
        value_name = "URL",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub url: Option<String>,
    /// Test every adapter that has a `test_url`, on that page.
    #[arg(long)]
    pub all: bool,
    /// Adapter folders besides the user adapter directory (as `tabwire mcp --adapters`).
    #[arg(long = "adapters", value_name = "DIR")]
    pub adapter_dirs: Vec<PathBuf>,
    /// The user adapter directory (default: `adapters` in Tabwire's config folder).
    #[arg(long = "user-adapters", value_name = "DIR")]
    pub user_adapters: Option<PathBuf>,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The extension id allowed to connect, when this command serves the port itself.
    #[arg(long, env = "TABWIRE_EXTENSION_ID", default_value = DEFAULT_EXTENSION_ID,
          value_parser = parse_extension_id)]
    pub extension_id: String,
    /// How long to wait for the browser.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub wait_ms: u64,
    /// Each tool call's timeout.
    #[arg(long, default_value_t = 15_000, value_name = "MS")]
    pub call_timeout_ms: u64,
}

#[derive(Args, Debug, Clone)]
pub struct ConnectionArgs {
    /// WebSocket port on 127.0.0.1 (the extension must use the same one).
    #[arg(long, env = "TABWIRE_PORT", default_value_t = DEFAULT_PORT,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub port: u16,
    /// The pairing secret (64 hex characters; created with mode 0600 when missing).
    /// Default: $XDG_CONFIG_HOME/tabwire/secret or ~/.config/tabwire/secret.
    #[arg(long, env = "TABWIRE_SECRET_FILE", value_name = "FILE")]
    pub secret_file: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct McpArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The extension id allowed to connect (the WebSocket `Origin` must be chrome-extension://ID).
    #[arg(long, env = "TABWIRE_EXTENSION_ID", default_value = DEFAULT_EXTENSION_ID,
          value_parser = parse_extension_id)]
    pub extension_id: String,
    /// A directory of adapter files (every *.json in it); repeatable. A file whose adapter has a
    /// built-in adapter's name replaces it. Watched: edits reach open tabs within a second.
    /// The environment variable TABWIRE_ADAPTERS may name one more (the .mcpb bundle's
    /// setting; empty: none).
    #[arg(long = "adapters", value_name = "DIR")]
    pub adapter_dirs: Vec<PathBuf>,
    /// The user adapter directory: where the `site_save` tool writes adapters, loaded and
    /// watched like an --adapters one (default: `adapters` in Tabwire's config folder, e.g.
    /// ~/.config/tabwire/adapters).
    #[arg(long = "user-adapters", value_name = "DIR")]
    pub user_adapters: Option<PathBuf>,
    /// Add a match pattern to an adapter, e.g. `todomvc=http://127.0.0.1/*`; repeatable.
    #[arg(long = "adapter-match", value_name = "NAME=PATTERN", value_parser = parse_adapter_match)]
    pub adapter_matches: Vec<AdapterMatch>,
    /// How long a tool call may take before it fails with TIMEOUT, in milliseconds.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub call_timeout_ms: u64,
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio (loopback only,
    /// e.g. 127.0.0.1:8765).
    #[arg(long, value_name = "ADDR", value_parser = parse_loopback)]
    pub http: Option<std::net::SocketAddr>,
    /// Let page tools act on every site without asking (automation and tests only: the user is
    /// never asked). Trusted input still needs its own grant.
    #[arg(long)]
    pub allow_all_origins: bool,
    /// Where page_screenshot saves screenshots asked for as files (default: Tabwire's folder in
    /// your data directory).
    #[arg(long, value_name = "DIR")]
    pub screenshots_dir: Option<PathBuf>,
    /// The only folder files may be uploaded from (page_act's upload, adapters' upload steps);
    /// names are relative to it (default: "uploads" in Tabwire's configuration folder, made
    /// on first use).
    #[arg(long, env = "TABWIRE_UPLOADS_DIR", value_name = "DIR")]
    pub uploads_dir: Option<PathBuf>,
    /// Where browser_downloads saves the downloads it is asked to (default: "downloads" in
    /// Tabwire's configuration folder, made on first use).
    #[arg(long, env = "TABWIRE_DOWNLOADS_DIR", value_name = "DIR")]
    pub downloads_dir: Option<PathBuf>,
}

/// `--http ADDR`: a socket address on a loopback interface.
fn parse_loopback(value: &str) -> Result<std::net::SocketAddr, String> {
    let addr: std::net::SocketAddr = value
        .parse()
        .map_err(|_| format!("{value:?} is not an address like 127.0.0.1:8765"))?;
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(format!(
            "{addr} is not a loopback address: tabwire serves HTTP on 127.0.0.1 or [::1] only"
        ))
    }
}

#[derive(Args, Debug, Clone)]
pub struct GrantArgs {
    /// The site: its origin (`https://mail.example.com`) or any URL of it.
    #[arg(value_name = "ORIGIN")]
    pub origin: String,
    /// Trusted input: actions go through Chrome's debugger, which pages cannot tell from a
    /// person's input (Chrome shows a "started debugging this browser" bar meanwhile).
    #[arg(long)]
    pub trusted_input: bool,
    /// For this agent only (its name in the popup or `tabwire status`, e.g. `claude-code-2`);
    /// without it, for every agent.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct AuditArgs {
    /// How many calls to print.
    #[arg(short = 'n', long, default_value_t = 20)]
    pub lines: usize,
}

#[derive(Args, Debug, Clone)]
pub struct PairArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Where to write the extension's pairing file (`{"port": P, "secret": "..."}`),
    /// e.g. extension/pairing.json.
    #[arg(long, value_name = "PATH")]
    pub extension_config: PathBuf,
}

/// `--adapter-match NAME=PATTERN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterMatch {
    pub adapter: String,
    pub pattern: String,
}

fn parse_adapter_match(value: &str) -> Result<AdapterMatch, String> {
    let (adapter, pattern) = value
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=PATTERN, got {value:?}"))?;
    if adapter.is_empty() || pattern.is_empty() {
        return Err(format!("expected NAME=PATTERN, got {value:?}"));
    }
    bridge::pattern::MatchPattern::parse(pattern).map_err(|e| e.to_string())?;
    Ok(AdapterMatch {
        adapter: adapter.to_owned(),
        pattern: pattern.to_owned(),
    })
}

/// Chrome extension ids are 32 characters from `a` to `p`.
fn parse_extension_id(value: &str) -> Result<String, String> {
    if value.len() == 32 && value.bytes().all(|b| (b'a'..=b'p').contains(&b)) {
        Ok(value.to_owned())
    } else {
        Err(format!(
            "{value:?} is not a Chrome extension id (32 letters from a to p)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn mcp_defaults_and_repeatable_options() {
        let cli = Cli::try_parse_from([
            "tabwire",
            "mcp",
            "--port",
            "4000",
            "--adapters",
            "a",
            "--adapters",
            "b",
            "--adapter-match",
            "todomvc=http://127.0.0.1/*",
        ])
        .unwrap();
        let Command::Mcp(args) = cli.command else {
            panic!("expected mcp")
        };
        assert_eq!(args.connection.port, 4000);
        assert_eq!(args.adapter_dirs, [PathBuf::from("a"), PathBuf::from("b")]);
        assert_eq!(
            args.adapter_matches,
            [AdapterMatch {
                adapter: "todomvc".into(),
                pattern: "http://127.0.0.1/*".into()
            }]
        );
        assert_eq!(args.call_timeout_ms, 30_000);
    }

    #[test]
    fn adapters_check_takes_paths() {
        let cli = Cli::try_parse_from(["tabwire", "adapters", "check", "a", "b.json"]).unwrap();
        let Command::Adapters(AdaptersCommand::Check { paths }) = cli.command else {
            panic!("expected adapters check")
        };
        assert_eq!(paths, [PathBuf::from("a"), PathBuf::from("b.json")]);
    }

    #[test]
    fn grant_commands_take_an_origin() {
        let cli = Cli::try_parse_from(["tabwire", "allow", "--trusted-input", "https://a.example"])
            .unwrap();
        let Command::Allow(args) = cli.command else {
            panic!("expected allow")
        };
        assert_eq!(args.origin, "https://a.example");
        assert!(args.trusted_input);
        let cli = Cli::try_parse_from(["tabwire", "audit", "-n", "5"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Audit(AuditArgs { lines: 5 })
        ));
        let cli = Cli::try_parse_from(["tabwire", "mcp", "--allow-all-origins"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Mcp(McpArgs {
                allow_all_origins: true,
                ..
            })
        ));
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in [
            &["tabwire", "mcp", "--adapter-match", "todomvc"][..],
            &["tabwire", "mcp", "--adapter-match", "todomvc=not a pattern"],
            &["tabwire", "mcp", "--extension-id", "abc"],
            &["tabwire", "mcp", "--port", "0"],
            &["tabwire", "mcp", "--http", "0.0.0.0:8765"],
            &["tabwire", "mcp", "--http", "localhost"],
            &["tabwire", "pair"],
            &["tabwire", "adapters"],
            &["tabwire", "allow"],
            &["tabwire", "audit", "-n", "x"],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?} should fail");
        }
    }
}
