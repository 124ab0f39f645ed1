//! The release `.mcpb` bundle, `target/dist/tabwire-<version>.mcpb`: one bundle that installs on
//! macOS, Windows and Linux. It holds every binary `cargo xtask dist` built — macOS's two as one
//! universal (fat) Mach-O, since `platform_overrides` is chosen by OS only — the icon, and the
//! manifest the host binary writes (`tabwire mcpb-manifest`), re-pointed at those binaries: the
//! Linux x64 one by default, `platform_overrides` for `darwin` and `win32`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;
use serde_json::{Value, json};

use crate::dist::{self, PLATFORMS, Platform};
use crate::util::{Paths, log, output};

/// The bundle's icon (512×512 PNG), also the npm package's.
const ICON: &str = "npm/icon.png";

/// Builds the bundle from the binaries at hand ([`dist::binary_at_hand`]); returns its path, or
/// `None` without a Linux x64 binary (the bundle's default command).
pub fn build(paths: &Paths) -> anyhow::Result<Option<PathBuf>> {
    let at_hand: Vec<(&Platform, PathBuf)> = PLATFORMS
        .iter()
        .filter_map(|p| dist::binary_at_hand(paths, p).map(|b| (p, b)))
        .collect();
    let Some((default, default_binary)) = at_hand
        .iter()
        .find(|(p, _)| p.os == "linux" && p.cpu == "x64")
    else {
        log("mcpb: no linux-x64 binary at hand: the release bundle is left out");
        return Ok(None);
    };
    let host = paths.server_binary();
    let manifest_text = output(Command::new(&host).arg("mcpb-manifest"))
        .with_context(|| format!("asking {} for its .mcpb manifest", host.display()))?;
    let mut manifest: Value = serde_json::from_str(&manifest_text)?;
    let mut entries = vec![(
        "icon.png".to_owned(),
        std::fs::read(paths.root.join(ICON)).with_context(|| format!("reading {ICON}"))?,
        0o644,
    )];
    let linux = format!("server/{}/tabwire", default.name());
    entries.push((linux.clone(), std::fs::read(default_binary)?, 0o755));
    let mut overrides = serde_json::Map::new();
    let mut platforms = vec![json!("linux")];
    if let Some((windows, binary)) = at_hand.iter().find(|(p, _)| p.os == "win32") {
        let path = format!("server/{}/{}", windows.name(), windows.exe());
        entries.push((path.clone(), std::fs::read(binary)?, 0o755));
        overrides.insert(
            "win32".into(),
            json!({"command": format!("${{__dirname}}/{path}")}),
        );
        platforms.push(json!("win32"));
    }
    let macs: Vec<Vec<u8>> = at_hand
        .iter()
        .filter(|(p, _)| p.os == "darwin")
        .map(|(_, binary)| std::fs::read(binary))
        .collect::<Result<_, _>>()?;
    if !macs.is_empty() {
        let path = "server/darwin/tabwire".to_owned();
        entries.push((path.clone(), fat_macho(&macs)?, 0o755));
        overrides.insert(
            "darwin".into(),
            json!({"command": format!("${{__dirname}}/{path}")}),
        );
        platforms.push(json!("darwin"));
    }
    manifest["icon"] = json!("icon.png");
    manifest["server"]["entry_point"] = json!(linux);
    manifest["server"]["mcp_config"]["command"] = json!(format!("${{__dirname}}/{linux}"));
    manifest["server"]["mcp_config"]["platform_overrides"] = overrides.into();
    manifest["compatibility"]["platforms"] = platforms.into();
    let mut all = vec![(
        "manifest.json".to_owned(),
        (serde_json::to_string_pretty(&manifest)? + "\n").into_bytes(),
        0o644,
    )];
    all.extend(entries);
    let bundle = paths
        .target
        .join("dist")
        .join(format!("tabwire-{}.mcpb", crate::package::version(paths)?));
    crate::package::write_zip(&bundle, &all)?;
    log(&format!("mcpb: {}", bundle.display()));
    Ok(Some(bundle))
}

/// A universal ("fat") Mach-O of thin ones: the fat header (big-endian magic, count, then each
/// slice's CPU type, subtype, offset, size and alignment), each slice aligned to 2^14 bytes as
/// Apple's `lipo` does for arm64.
fn fat_macho(thin: &[Vec<u8>]) -> anyhow::Result<Vec<u8>> {
    const ALIGN_LOG2: u32 = 14;
    let align = 1usize << ALIGN_LOG2;
    let mut header = Vec::new();
    header.extend(0xcafe_babe_u32.to_be_bytes());
    header.extend(u32::try_from(thin.len())?.to_be_bytes());
    let mut offset = align;
    let mut body = Vec::new();
    for slice in thin {
        anyhow::ensure!(
            slice.len() > 12 && slice[..4] == 0xfeed_facf_u32.to_le_bytes(),
            "not a 64-bit little-endian Mach-O"
        );
        header.extend_from_slice(&slice[4..8].iter().rev().copied().collect::<Vec<u8>>()); // cputype
        header.extend_from_slice(&slice[8..12].iter().rev().copied().collect::<Vec<u8>>()); // subtype
        header.extend(u32::try_from(offset)?.to_be_bytes());
        header.extend(u32::try_from(slice.len())?.to_be_bytes());
        header.extend(ALIGN_LOG2.to_be_bytes());
        body.resize(offset - align, 0);
        body.extend_from_slice(slice);
        offset = (align + body.len()).div_ceil(align) * align;
    }
    let mut fat = header;
    fat.resize(align, 0);
    fat.extend(body);
    Ok(fat)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thin(cputype: u32, len: usize) -> Vec<u8> {
        let mut bytes = 0xfeed_facf_u32.to_le_bytes().to_vec();
        bytes.extend(cputype.to_le_bytes());
        bytes.extend(3u32.to_le_bytes());
        bytes.resize(len, 0xab);
        bytes
    }

    #[test]
    fn a_fat_macho_lists_each_slice_where_it_is() {
        let x64 = thin(0x0100_0007, 20_000);
        let arm = thin(0x0100_000c, 100);
        let fat = fat_macho(&[x64.clone(), arm.clone()]).unwrap();
        let word = |at: usize| u32::from_be_bytes(fat[at..at + 4].try_into().unwrap());
        assert_eq!((word(0), word(4)), (0xcafe_babe, 2));
        assert_eq!((word(8), word(16), word(20)), (0x0100_0007, 16384, 20_000));
        assert_eq!(
            (word(28), word(36), word(40)),
            (0x0100_000c, 16384 * 3, 100)
        );
        assert_eq!(&fat[16384..16384 + 20_000], &x64[..]);
        assert_eq!(&fat[16384 * 3..16384 * 3 + 100], &arm[..]);
    }
}
