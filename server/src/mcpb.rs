//! The manifest of the `.mcpb` bundle (Claude Desktop's one-click install format, manifest
//! version 0.3) for the platform this binary was built for: the binary as the server, the
//! meta-tools it always offers, and the settings a user would want (the WebSocket port and an
//! adapter folder), passed as `TABWIRE_PORT` and `TABWIRE_ADAPTERS`. The build packs it next to the
//! binary (`cargo xtask build`); `npx @anthropic-ai/mcpb validate` checks it in the tests.

use serde_json::{Value, json};

use crate::cli::DEFAULT_PORT;

pub fn manifest() -> Value {
    let binary = format!("server/tabwire{}", std::env::consts::EXE_SUFFIX);
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        _ => "linux",
    };
    let tools: Vec<Value> = crate::mcp::meta_tool_summaries()
        .into_iter()
        .map(|(name, description)| json!({"name": name, "description": description}))
        .collect();
    json!({
        "manifest_version": "0.3",
        "name": "tabwire",
        "display_name": "Tabwire",
        "version": crate::extension::VERSION,
        "description": "Lets Claude use the websites open in your own Chrome, with your logins, \
                        through per-site tools.",
        "long_description": "Tabwire connects Claude to the Tabwire Chrome extension on \
            127.0.0.1. Sites with an adapter (TodoMVC, TiddlyWiki, MailDev, your own) and pages that \
            register WebMCP tools get their own tools. After installing, run `tabwire setup` once \
            (or `tabwire extension install DIR`) and load the extension it writes with Chrome's \
            \"Load unpacked\"; `tabwire doctor` says what is wrong if Claude sees no browser.",
        "author": {"name": "The Tabwire authors"},
        "license": "MIT OR Apache-2.0",
        "keywords": ["browser", "chrome", "automation", "webmcp"],
        "server": {
            "type": "binary",
            "entry_point": binary,
            "mcp_config": {
                "command": format!("${{__dirname}}/{binary}"),
                "args": ["mcp"],
                "env": {
                    "TABWIRE_PORT": "${user_config.port}",
                    "TABWIRE_ADAPTERS": "${user_config.adapter_dir}",
                },
            },
        },
        "tools": tools,
        "tools_generated": true,
        "compatibility": {"platforms": [platform]},
        "user_config": {
            "port": {
                "type": "number",
                "title": "Port",
                "description": "The port on 127.0.0.1 where Tabwire waits for the browser \
                                extension (the extension must be paired with the same one).",
                "default": DEFAULT_PORT,
                "min": 1024,
                "max": 65535,
                "required": false,
            },
            "adapter_dir": {
                "type": "directory",
                "title": "Adapter folder",
                "description": "A folder of your own adapter files (*.json), loaded and watched \
                                for changes. Leave empty for the built-in adapters only.",
                "required": false,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_runs_the_bundled_binary_with_the_user_settings() {
        let m = manifest();
        let config = &m["server"]["mcp_config"];
        assert_eq!(
            config["command"].as_str().unwrap(),
            format!(
                "${{__dirname}}/{}",
                m["server"]["entry_point"].as_str().unwrap()
            )
        );
        assert_eq!(config["env"]["TABWIRE_PORT"], "${user_config.port}");
        assert_eq!(m["user_config"]["port"]["default"], DEFAULT_PORT);
        let names: Vec<&str> = m["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, crate::hub::RESERVED_TOOL_NAMES);
    }
}
