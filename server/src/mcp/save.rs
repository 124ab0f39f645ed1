//! `site_save`: the model saves what it learned about a site as an adapter. The document is
//! checked by the user adapter store (`adapter_store.rs`: size, validation with every problem
//! located, name, match patterns, a hand-written file in the way), served on trial so its
//! read-only tools run once in the tab (their results are the dry run's answer), then written and
//! served for good, its tools callable at once. Replacing a file a person wrote takes more than the
//! model's `overwrite`: the user's yes, asked through MCP elicitation (`PERMISSION_REQUIRED` where
//! the client cannot ask), and the person's file is kept where no later save prunes it.

use std::path::Path;
use std::time::Duration;

use bridge::{ErrorCode, WireError};
use rmcp::model::{
    CallToolResult, ElicitRequestParams, ElicitationAction, ElicitationSchema, JsonObject,
};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::TabwireMcp;
use super::table::{About, Call, Hints, Needs, ReadFrom, Reading, ServerTool};
use crate::adapter_store::{AdapterStore, SaveRefusal};
use crate::browser_tools::PageTab;
use crate::health;
use crate::hub::Hub;
use crate::mcp::typed::TabIdArgument;
use crate::mcp::{Failure, success};

/// `site_save`: the model saves an adapter for the tab's site.
pub(crate) struct SiteSave;

/// `site_save`'s arguments.
pub(crate) struct SaveArgs {
    /// The adapter document as JSON text.
    text: String,
    /// It came as an object (so its problems are located by path alone).
    as_object: bool,
    overwrite: bool,
    dry_run: bool,
}

/// `site_save`'s arguments as the call gives them (and as `tools/list` shows them).
#[derive(Deserialize, JsonSchema)]
pub(crate) struct GivenSave {
    #[schemars(schema_with = "object_or_text")]
    adapter: AdapterDocument,
    /// Replace a hand-written file
    #[serde(default)]
    overwrite: bool,
    #[serde(default)]
    dry_run: bool,
}

/// The adapter document: an object, or JSON text.
#[derive(Deserialize)]
#[serde(untagged)]
enum AdapterDocument {
    Text(String),
    Object(JsonObject),
}

fn object_or_text(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["object", "string"]})
}

impl ServerTool for SiteSave {
    const ABOUT: About = About {
        name: "site_save",
        title: "Save a site adapter",
        description: "Save an adapter for the tab's site: checked (errors located), its read-only \
            tools tried in the tab, then saved and loaded.",
        hints: Hints::says(false, false, true),
        tab_id: TabIdArgument::Shown(Some("default: the focused tab")),
        needs: Needs::AllowedPage,
    };
    type Given = GivenSave;
    type Args = SaveArgs;

    async fn run(mcp: &TabwireMcp, call: Call<SaveArgs>) -> Result<CallToolResult, Failure> {
        let store = &mcp.safeguards.adapter_store;
        let page = call.page().clone();
        site_save(&mcp.hub, store, &call.peer, &page, call.args).await
    }
}

impl ReadFrom<GivenSave> for SaveArgs {
    fn read_from(given: GivenSave, _: &mut Reading<'_>) -> Result<Self, WireError> {
        // An object's key order is gone by now (and so the lines the model would count): its
        // problems are located by path alone.
        let (text, as_object) = match given.adapter {
            AdapterDocument::Text(text) => (text, false),
            AdapterDocument::Object(document) => (
                serde_json::to_string_pretty(&document)
                    .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?,
                true,
            ),
        };
        Ok(SaveArgs {
            text,
            as_object,
            overwrite: given.overwrite,
            dry_run: given.dry_run,
        })
    }
}

/// Saves (or with `dry_run`, only tries) the adapter for `page`, whose origin the gate allowed.
async fn site_save(
    hub: &Hub,
    store: &AdapterStore,
    peer: &Peer<RoleServer>,
    page: &PageTab,
    args: SaveArgs,
) -> Result<CallToolResult, Failure> {
    let SaveArgs {
        text,
        as_object,
        overwrite,
        dry_run,
    } = args;
    let checked = match store.check(&text, &page.origin, overwrite) {
        Ok(checked) => checked,
        Err(refusal) => return Err(refused(refusal, as_object)),
    };
    let since = hub.now();
    store.start_trial(&checked.adapter);
    let runs = match health::run_read_only(hub, &checked.adapter, page.tab, since).await {
        Ok(runs) => runs,
        Err(mut error) => {
            store.end_trial();
            error.message = format!("not saved: {}", error.message);
            return Err(error.into());
        }
    };
    let results: Vec<Value> = runs.iter().map(health::ToolRun::to_json).collect();
    if let Some(failed) = runs.iter().find_map(|run| run.outcome.as_ref().err()) {
        store.end_trial();
        let error = WireError::new(
            failed.code,
            format!(
                "not saved: a read-only tool failed in tab {}: {}",
                page.tab, failed.message
            ),
        );
        return Err(Failure::with(error, json!({"results": results})));
    }
    let tools: Vec<String> = checked.adapter.tool_names().collect();
    let name = checked.adapter.name.clone();
    let file = checked.path.display().to_string();
    if dry_run {
        store.end_trial();
        return Ok(success(json!({
            "dry_run": true, "adapter": name, "file": file, "replaces": checked.replaces,
            "tools": tools, "results": results,
        })));
    }
    if checked.hand_written
        && let Err(error) =
            confirm_replacing(peer, &checked.path, &checked.adapter.name, &page.origin).await
    {
        store.end_trial();
        return Err(error.into());
    }
    // Checked again as it is written: the directory may have changed during the trial. A file a
    // person wrote is replaced only when the user was asked about it just now.
    let saved = match store.save(&text, &page.origin, checked.hand_written) {
        Ok(saved) => saved,
        Err(refusal) => {
            store.end_trial();
            return Err(refused(refusal, as_object));
        }
    };
    let mut answer = json!({
        "saved": true, "adapter": name, "file": file, "tools": tools, "results": results,
    });
    if let Some(backup) = saved.backup {
        answer["backup"] = Value::from(backup.display().to_string());
    }
    Ok(success(answer))
}

/// How long the user has to answer whether their file may be replaced.
const ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// The one boolean of that question's form (no answer is no).
const REPLACE_FIELD: &str = "replace";

/// Asks the user whether the adapter file at `path`, which a person wrote, may be replaced; Ok
/// only on an explicit yes. `PERMISSION_REQUIRED` when the client cannot ask or the user says no.
async fn confirm_replacing(
    peer: &Peer<RoleServer>,
    path: &Path,
    adapter: &str,
    origin: &str,
) -> Result<(), WireError> {
    let required = |why: &str| {
        WireError::new(
            ErrorCode::PermissionRequired,
            format!(
                "not saved: {} was written by hand, and replacing it needs the user's yes \
                 ({why}). Nothing was changed: save under another adapter name, or ask the user \
                 to edit or delete that file themselves.",
                path.display()
            ),
        )
    };
    if !peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return Err(required("this client cannot ask its user"));
    }
    let schema = ElicitationSchema::builder()
        .optional_bool(REPLACE_FIELD, false)
        .description("Replace your adapter file")
        .build()
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "The assistant wants to replace the adapter file {} that you wrote (adapter \
             {adapter:?}, for {origin}) with its own version. Your file will be kept in \
             backups/hand-written/ until you delete it. Replace it?",
            path.display()
        ),
        requested_schema: schema,
    };
    let answer = peer
        .create_elicitation_with_timeout(params, Some(ASK_TIMEOUT))
        .await
        .map_err(|e| {
            tracing::info!(error = %e, "the client could not ask its user");
            required("the client could not ask its user")
        })?;
    let yes = matches!(answer.action, ElicitationAction::Accept)
        && answer.content.as_ref().and_then(|c| c.get(REPLACE_FIELD)) == Some(&Value::Bool(true));
    if yes {
        tracing::info!(file = %path.display(), "the user agreed to replace a hand-written adapter");
        Ok(())
    } else {
        Err(required("the user said no when asked"))
    }
}

/// A refused save: the text says why (every validation problem on its line), the structured
/// content adds the refusal's kind.
fn refused(mut refusal: SaveRefusal, as_object: bool) -> Failure {
    if let (SaveRefusal::Invalid(problems), true) = (&mut refusal, as_object) {
        for found in problems {
            (found.problem.line, found.problem.column) = (None, None);
        }
    }
    let error = WireError::new(refusal.code(), format!("not saved: {refusal}"));
    Failure::with(error, json!({"refusal": refusal.kind()}))
}
