//! The server's own tools as one table ([`TOOLS`]): each entry is one type implementing
//! [`ServerTool`] — one [`About`] value (its name, title, description, hints, how it takes
//! `tab_id`, and what it needs: no tab, a named tab, a tab whose origin page tools may act on,
//! trusted input), its typed arguments (one type, [`Arguments`], that is both the input schema
//! and the reader of a call), what the audit log records, and its handler. Its `tools/list` spec
//! is derived from those two ([`Entry::spec`]), never written by hand. The one dispatcher
//! (`dispatch.rs`) runs every entry the same way; adding a tool is adding one entry. Adapter tools
//! are not here: their specs come from `ToolSpec::of`.

use std::future::Future;
use std::marker::PhantomData;

use bridge::page_ops;
use bridge::{TabId, WireError};
use futures_util::future::BoxFuture;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use super::typed::{Arguments, TabIdArgument};
use super::{Failure, TabwireMcp, meta, page, save};
use crate::browser_tools::{self, PageTab};
use crate::hub::PageProgress;

/// What a tool needs before its handler runs; the dispatcher provides it, the handler relies on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Needs {
    /// No tab of its own: a `tab_id` given is passed on as it is.
    Nothing,
    /// A tab the call names.
    NamedTab,
    /// The tab (named, routed by a ref, else the focused one) resolved, and its origin allowed
    /// page tools by the user: the permission gate.
    AllowedPage,
    /// As [`Needs::AllowedPage`], and trusted input offered when an action had no effect.
    AllowedPageTrustedInput,
}

/// One call, as a tool's handler gets it: its typed arguments and what its [`Needs`] provided.
pub(crate) struct Call<A> {
    pub args: A,
    /// The tab given (or routed by a ref); always there for [`Needs::NamedTab`].
    pub tab: Option<TabId>,
    /// The tab resolved and allowed, for [`Needs::AllowedPage`] and
    /// [`Needs::AllowedPageTrustedInput`].
    pub page: Option<PageTab>,
    /// The user granted trusted input on the page's origin.
    pub trusted_input: bool,
    /// Where the call's progress goes, when the client asked for it.
    pub report: Option<mpsc::UnboundedSender<PageProgress>>,
    /// The client that made the call (to ask its user, through elicitation).
    pub peer: Peer<RoleServer>,
}

impl<A> Call<A> {
    /// The tab the call named ([`Needs::NamedTab`]) or, for the page tools' needs, acts on.
    pub fn tab(&self) -> TabId {
        match (&self.page, self.tab) {
            (Some(page), _) => page.tab,
            (None, Some(tab)) => tab,
            (None, None) => unreachable!("the dispatcher provides the tab a tool needs"),
        }
    }

    /// The page the call acts on ([`Needs::AllowedPage`]).
    pub fn page(&self) -> &PageTab {
        self.page
            .as_ref()
            .expect("the dispatcher resolves the page a page tool needs")
    }
}

/// What `tools/list` says of a server tool besides its arguments' schema, and what it needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct About {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub hints: Hints,
    /// How its schema shows `tab_id` (required, whatever this says, when it needs a named tab).
    pub tab_id: TabIdArgument,
    /// What it needs, unless its arguments say more ([`ServerTool::needs`]).
    pub needs: Needs,
}

/// A tool's MCP hints, each said or left unsaid (`None`: the client assumes MCP's default).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

impl Hints {
    /// Whether it only reads, whether it may destroy, and whether it reaches outside (the web).
    pub const fn says(read_only: bool, destructive: bool, open_world: bool) -> Hints {
        Hints {
            read_only: Some(read_only),
            destructive: Some(destructive),
            idempotent: None,
            open_world: Some(open_world),
        }
    }

    /// Reads what Tabwire knows, and the same call again reads the same.
    pub const READS_AGAIN_ALIKE: Hints = Hints {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: None,
    };

    /// Reaches the web, and says no more (what it does is another tool's to say).
    pub const OPEN_WORLD: Hints = Hints {
        read_only: None,
        destructive: None,
        idempotent: None,
        open_world: Some(true),
    };

    fn annotations(self) -> ToolAnnotations {
        let mut annotations = ToolAnnotations::new();
        annotations.read_only_hint = self.read_only;
        annotations.destructive_hint = self.destructive;
        annotations.idempotent_hint = self.idempotent;
        annotations.open_world_hint = self.open_world;
        annotations
    }
}

impl About {
    /// The tool as `tools/list` shows it, with `schema` (its arguments', without `tab_id`).
    pub fn spec(&self, schema: serde_json::Value) -> Tool {
        let required = self.needs == Needs::NamedTab;
        let schema = super::typed::with_tab_id(schema, self.tab_id, required);
        Tool::new(self.name, self.description, super::object(schema))
            .with_title(self.title)
            .with_annotations(self.hints.annotations())
    }
}

/// What a tool's handler gets, read from its arguments as given: the checks the schema cannot say
/// (a URL's scheme, one of two fields) and a ref's routing, before anything reaches the browser or
/// the gate. Arguments the handler takes as given need nothing more.
pub(crate) trait ReadFrom<G>: Sized {
    fn read_from(given: G, at: &mut Reading<'_>) -> Result<Self, WireError>;
}

impl<G> ReadFrom<G> for G {
    fn read_from(given: G, _: &mut Reading<'_>) -> Result<G, WireError> {
        Ok(given)
    }
}

/// Where a call's arguments are read: the server, and the tab the call named (`tab_id`, already
/// taken out), which a ref may route elsewhere.
pub(crate) struct Reading<'a> {
    pub mcp: &'a TabwireMcp,
    pub tab: Option<TabId>,
}

/// A server tool: one value holding everything about it.
pub(crate) trait ServerTool: Send + Sync + 'static {
    const ABOUT: About;
    /// Its arguments as a call gives them: the schema `tools/list` shows and their reader.
    type Given: Arguments;
    /// What its handler gets: the arguments as given, or what they are read into.
    type Args: ReadFrom<Self::Given> + Send;
    /// What this call needs: [`About::needs`], unless what it asks for reads more (a hand-off
    /// that waits for text on the page needs the page tools' gate, one that waits for a URL does
    /// not).
    fn needs(_args: &Self::Args) -> Needs {
        Self::ABOUT.needs
    }
    /// What the audit log records as the call's tab and origin when the tool needs no page (one
    /// that needs a page records that page).
    fn audited(_mcp: &TabwireMcp, _args: &Self::Args, _tab: Option<TabId>) -> Option<PageTab> {
        None
    }
    /// Runs the call.
    fn run<'a>(
        mcp: &'a TabwireMcp,
        call: Call<Self::Args>,
    ) -> impl Future<Output = Result<CallToolResult, Failure>> + Send + 'a;
}

/// What a call learns for its audit line: the tab and origin it acted on.
pub(crate) type Target = Option<PageTab>;

/// A [`ServerTool`] with its type erased, so that the tools fit one table.
pub(crate) trait Entry: Sync {
    fn name(&self) -> &'static str;
    fn spec(&self) -> Tool;
    fn call<'a>(&'a self, mcp: &'a TabwireMcp, request: Request<'a>) -> Answer<'a>;
}

/// A call as it reaches the table: its arguments, its client, where its progress goes, and what
/// it learns for its audit line.
pub(crate) struct Request<'a> {
    pub args: JsonObject,
    pub peer: &'a Peer<RoleServer>,
    pub report: Option<mpsc::UnboundedSender<PageProgress>>,
    pub target: &'a mut Target,
}

/// A call's answer, once it has run.
pub(crate) type Answer<'a> = BoxFuture<'a, Result<CallToolResult, Failure>>;

struct Of<T>(PhantomData<fn() -> T>);

impl<T: ServerTool> Entry for Of<T> {
    fn name(&self) -> &'static str {
        T::ABOUT.name
    }

    fn spec(&self) -> Tool {
        T::ABOUT.spec(T::Given::schema())
    }

    fn call<'a>(&'a self, mcp: &'a TabwireMcp, request: Request<'a>) -> Answer<'a> {
        Box::pin(super::dispatch::run::<T>(mcp, request))
    }
}

/// A table entry for tool type `T`.
macro_rules! of {
    ($tool:ty) => {
        &Of::<$tool>(PhantomData)
    };
}

/// Every server tool, in the order `tools/list` shows them.
pub(crate) static TOOLS: &[&dyn Entry] = &[
    of!(meta::BrowserTabs),
    of!(meta::BrowserOpen),
    of!(meta::SiteCall),
    of!(meta::SiteState),
    of!(save::SiteSave),
    of!(browser_tools::BrowserTab),
    of!(browser_tools::PageScreenshot),
    of!(browser_tools::BrowserDownloads),
    of!(crate::handoff::BrowserHandoff),
    of!(page::PageTool<0>),
    of!(page::PageTool<1>),
    of!(page::PageTool<2>),
    of!(page::PageTool<3>),
    of!(page::PageTool<4>),
];

/// The server tool named `name`, if it is one.
pub(crate) fn find(name: &str) -> Option<&'static dyn Entry> {
    TOOLS.iter().copied().find(|entry| entry.name() == name)
}

/// Every page tool of `bridge::page_ops` has its entry: the table cannot miss one.
const _: () = assert!(page_ops::PAGE_TOOLS.len() == 5);
