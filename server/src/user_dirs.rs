//! Where this user's files are, per operating system: Tabwire's own (the pairing secret, the list
//! of paired extensions, the default extension folder) and, for `setup` and `doctor`, the MCP
//! clients'. Everything is derived from a [`UserDirs`] value, so tests build one over a temporary
//! folder instead of touching the real home.
//!
//! Tabwire's files are private to the user whatever command writes them first: every folder it
//! makes (and each missing parent) is created 0700, every file it writes is
//! created 0600 ([`create_private_dir`], [`private_file`]); on Windows the folders it makes, and so
//! what it writes in them, get an owner-only DACL instead (the `owner-only` crate).

use std::fs::{self, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// The operating systems Tabwire runs on; decides where the MCP clients keep their configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    Mac,
    Windows,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// Creates `dir` and its missing parents, private to this user: mode 0700 on Unix, an owner-only
/// DACL on Windows (the `owner-only` crate; what is created in them later inherits it). A folder that
/// exists already keeps its mode or ACL (it may be one the user chose and shares).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    // Outermost first, so each folder is private before anything is made in it.
    for made in missing.iter().rev() {
        owner_only::restrict(made, owner_only::Target::Folder)?;
    }
    Ok(())
}

/// Options that create a file readable by this user only (mode 0600 on Unix), for writing.
pub fn private_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Writes `bytes` to a new private file at `path` (it must not exist: a link planted there is
/// never followed).
pub fn write_new_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    private_file()
        .create_new(true)
        .open(path)?
        .write_all(bytes)?;
    owner_only::restrict(path, owner_only::Target::File)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserDirs {
    pub os: Os,
    /// The home folder (`HOME`; `%USERPROFILE%` on Windows).
    pub home: PathBuf,
    /// Application configuration: `$XDG_CONFIG_HOME` or `~/.config` on Linux, `~/Library/Application
    /// Support` on macOS, `%APPDATA%` on Windows (where Electron apps such as Claude Desktop and
    /// VS Code keep theirs too).
    pub config: PathBuf,
    /// Application data: `$XDG_DATA_HOME` or `~/.local/share` on Linux; as `config` elsewhere.
    pub data: PathBuf,
}

impl UserDirs {
    /// This user's folders, as the OS (and on Linux the XDG variables) say.
    pub fn from_env() -> Option<UserDirs> {
        Some(UserDirs {
            os: Os::current(),
            home: dirs::home_dir()?,
            config: dirs::config_dir()?,
            data: dirs::data_dir()?,
        })
    }

    /// Tabwire's configuration folder.
    pub fn tabwire_config(&self) -> PathBuf {
        self.config.join("tabwire")
    }

    /// The pairing secret's default place.
    pub fn secret(&self) -> PathBuf {
        self.tabwire_config().join("secret")
    }

    /// The list of the extension folders this user paired (see [`crate::extension::remembered`]).
    pub fn extensions_list(&self) -> PathBuf {
        self.tabwire_config().join("extensions.json")
    }

    /// The user adapter directory: adapters saved by `site_save` or the recorder, and the user's
    /// own, loaded and watched by default (`adapter_store.rs`).
    pub fn adapters(&self) -> PathBuf {
        self.tabwire_config().join("adapters")
    }

    /// The user's grants of page tools and trusted input, per origin (`grants.rs`).
    pub fn grants(&self) -> PathBuf {
        self.tabwire_config().join("grants.json")
    }

    /// The only folder calls may upload files from (`upload` steps, `page_act`'s `upload`).
    pub fn uploads(&self) -> PathBuf {
        self.tabwire_config().join("uploads")
    }

    /// Where `browser_downloads` saves the downloads it is asked to.
    pub fn downloads(&self) -> PathBuf {
        self.tabwire_config().join("downloads")
    }

    /// The audit log of tool calls (`audit.rs`).
    pub fn audit_log(&self) -> PathBuf {
        self.data.join("tabwire").join("audit.jsonl")
    }

    /// Where `page_screenshot` saves the screenshots asked for as files.
    pub fn screenshots(&self) -> PathBuf {
        self.data.join("tabwire").join("screenshots")
    }

    /// Where `tabwire setup` copies the binary that ran it, and where every client it sets up
    /// starts tabwire from: a place that outlives the download, the npm cache or the build
    /// folder the binary was run from.
    pub fn installed_binary(&self) -> PathBuf {
        let name = match self.os {
            Os::Windows => "tabwire.exe",
            Os::Linux | Os::Mac => "tabwire",
        };
        self.data.join("tabwire").join("bin").join(name)
    }

    /// Where `tabwire setup` writes the extension unless told otherwise.
    pub fn default_extension(&self) -> PathBuf {
        self.data.join("tabwire").join("extension")
    }
}
