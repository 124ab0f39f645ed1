//! Operations the service worker performs on the browser itself rather than in a page: listing
//! every tab, going back/forward, reloading, activating or closing one, capturing what a tab
//! shows, and listing what it downloaded. The one definition of their arguments and answers, for the server that asks
//! (`ToExtension::Browser`) and the worker that performs them (`ToServer::BrowserResult`), with
//! the pure decisions both sides share (how far to downscale a capture).

use serde::{Deserialize, Serialize};

use crate::protocol::TabId;
use crate::{ErrorCode, WireError, tagged};

/// Default bound of a screenshot's longer side, in pixels: legible for a model, about 1.2k image
/// tokens at most.
pub const DEFAULT_MAX_SIDE: u32 = 1024;
/// The largest bound a caller may ask for.
pub const MAX_SIDE: u32 = 4096;
/// The smallest bound a caller may ask for (below it a page is a smudge).
pub const MIN_SIDE: u32 = 32;

tagged::tagged_enum! {
    /// One operation, as `ToExtension::Browser` carries it in `op`. `Deserialize` is written by
    /// [`tagged::tagged_enum!`], field by field (see [`crate::tagged`] for why).
    #[derive(Serialize, Clone, Debug, PartialEq)]
    pub enum BrowserOp by "kind", listed in OP_KINDS {
        /// Every open tab (the server keeps the http(s) ones): answered with [`TabList`].
        "list_tabs" => ListTabs,
        /// Act on a tab: answered with [`TabActed`].
        "tab" => Tab { tab: TabId, action: TabAction },
        /// Capture what `tab` shows: answered with [`Captured`].
        "capture" => Capture(Capture),
        /// What `tab` downloaded: answered with [`crate::download::DownloadList`].
        "downloads" => Downloads { tab: TabId },
        /// Hand a step to the person (issue 28): answered with [`crate::handoff::HandoffShown`].
        "handoff" => Handoff(crate::handoff::ShowHandoff),
        /// What the person answered the hand-off, waiting up to `wait_ms` for it: answered with
        /// [`crate::handoff::HandoffAnswer`].
        "handoff_answer" => HandoffAnswer { handoff: String, wait_ms: u64 },
        /// The hand-off is over: its window closes. Answered with `{}`.
        "end_handoff" => EndHandoff { handoff: String },
    }
}

impl BrowserOp {
    /// The tab the op is about.
    pub fn tab(&self) -> Option<TabId> {
        match self {
            BrowserOp::ListTabs => None,
            BrowserOp::Tab { tab, .. } => Some(*tab),
            BrowserOp::Capture(capture) => Some(capture.tab),
            BrowserOp::Downloads { tab } => Some(*tab),
            BrowserOp::Handoff(show) => Some(show.tab),
            BrowserOp::HandoffAnswer { .. } | BrowserOp::EndHandoff { .. } => None,
        }
    }
}

/// What `browser_tab` does to a tab.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TabAction {
    Back,
    Forward,
    Reload,
    Activate,
    Close,
    /// Hold the tab for the calling agent (issue 28): decided by the hub, never sent to a browser.
    Claim,
    /// Let go of a tab the calling agent holds: decided by the hub, never sent to a browser.
    Release,
}

impl TabAction {
    pub const ALL: [TabAction; 7] = [
        TabAction::Back,
        TabAction::Forward,
        TabAction::Reload,
        TabAction::Activate,
        TabAction::Close,
        TabAction::Claim,
        TabAction::Release,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TabAction::Back => "back",
            TabAction::Forward => "forward",
            TabAction::Reload => "reload",
            TabAction::Activate => "activate",
            TabAction::Close => "close",
            TabAction::Claim => "claim",
            TabAction::Release => "release",
        }
    }

    pub fn parse(name: &str) -> Option<TabAction> {
        TabAction::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

/// A screenshot request.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Capture {
    pub tab: TabId,
    /// The origin the user allowed: the worker refuses (`NAVIGATED`) when the tab shows another.
    pub origin: String,
    /// Only this element (its box, clipped to the viewport); the whole visible tab when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<Shot>,
    pub max_width: u32,
    pub max_height: u32,
    pub format: ImageFormat,
}

/// The one element a capture shows.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Shot {
    /// The first element a CSS selector matches in the top document.
    Selector(String),
    /// A snapshot's element (`e12`, `f3e12`): the runtime of its frame finds it, when that frame
    /// still shows document `doc`.
    Ref {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        doc: Option<String>,
    },
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    Png,
    Jpeg,
}

impl ImageFormat {
    pub fn parse(name: &str) -> Option<ImageFormat> {
        match name {
            "png" => Some(ImageFormat::Png),
            "jpeg" => Some(ImageFormat::Jpeg),
            _ => None,
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpg",
        }
    }
}

/// One tab, as the worker sees it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BrowserTab {
    pub id: TabId,
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// The selected tab of its window.
    #[serde(default)]
    pub active: bool,
    /// Its window is the focused (last focused) one.
    #[serde(default)]
    pub focused_window: bool,
}

/// The answer to [`BrowserOp::ListTabs`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TabList {
    pub tabs: Vec<BrowserTab>,
    /// Who holds which tab (issue 28), added by the hub that decides holds; a browser never
    /// sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<TabHolders>,
}

/// The tabs agents hold, as the hub tells the agent that asked.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct TabHolders {
    /// The asking agent's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub you: Option<String>,
    /// Each held tab's holder.
    #[serde(default)]
    pub holders: std::collections::BTreeMap<TabId, String>,
}

impl TabList {
    /// The tab page tools use when none is named: the selected http(s) tab of the focused
    /// window, else of any window.
    pub fn default_tab(&self) -> Option<&BrowserTab> {
        let web = || {
            self.tabs
                .iter()
                .filter(|t| t.active && crate::origin::text_of(&t.url).is_some())
        };
        web().find(|t| t.focused_window).or_else(|| web().next())
    }
}

/// The answer to [`BrowserOp::Tab`]: the tab's URL afterwards (none once closed).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TabActed {
    pub tab: TabId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The answer to [`BrowserOp::Capture`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Captured {
    /// The image, base64.
    pub data: String,
    pub width: u32,
    pub height: u32,
    /// The tab was not the visible one of its window, so it was brought to the front.
    #[serde(default)]
    pub activated: bool,
}

/// An element's box as the page reports it for a capture, in CSS pixels of its frame's viewport.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ElementBox {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub viewport_width: f64,
    pub viewport_height: f64,
    /// The same-origin frames the element is in, innermost first (the page's runtime reaches
    /// into them): see [`ElementBox::in_top`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<FrameBox>,
}

/// Where a frame's content box sits in its parent's viewport, in CSS pixels, and that viewport's
/// size.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct FrameBox {
    pub x: f64,
    pub y: f64,
    pub viewport_width: f64,
    pub viewport_height: f64,
}

impl ElementBox {
    /// The box as its document's viewport shows it, through the same-origin frames it is in.
    pub fn in_top(mut self) -> ElementBox {
        let within = std::mem::take(&mut self.within);
        within
            .iter()
            .fold(self, |element, frame| element.in_parent(frame))
    }

    /// This box of an element in a child frame, as its parent's viewport shows it: the part the
    /// frame's viewport shows, moved by where the frame sits.
    pub fn in_parent(&self, frame: &FrameBox) -> ElementBox {
        let left = self.x.max(0.0);
        let top = self.y.max(0.0);
        let right = (self.x + self.width).min(self.viewport_width).max(left);
        let bottom = (self.y + self.height).min(self.viewport_height).max(top);
        ElementBox {
            x: frame.x + left,
            y: frame.y + top,
            width: right - left,
            height: bottom - top,
            viewport_width: frame.viewport_width,
            viewport_height: frame.viewport_height,
            within: Vec::new(),
        }
    }
}

/// A region of a captured image, in its pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// Ok when `tab`, showing `url`, still shows the origin the user `allowed`; else NAVIGATED
/// saying so and that `not_done`. The worker checks a capture and a frame's call with it, the
/// top frame's runtime a page tool's call.
pub fn still_shows(tab: TabId, allowed: &str, url: &str, not_done: &str) -> Result<(), WireError> {
    match crate::origin::text_of(url) {
        Some(shown) if shown == allowed => Ok(()),
        shown => Err(WireError::new(
            ErrorCode::Navigated,
            format!(
                "tab {tab} now shows {}, not {allowed}: {not_done}; call again",
                shown.as_deref().unwrap_or("a page that is not a website"),
            ),
        )),
    }
}

/// The part of a capture of `image_width`×`image_height` pixels (the whole viewport) that shows
/// `element`, clipped to the viewport; `None` when none of it is visible.
pub fn crop(element: &ElementBox, image_width: u32, image_height: u32) -> Option<Region> {
    if element.viewport_width <= 0.0 || element.viewport_height <= 0.0 {
        return None;
    }
    let sx = f64::from(image_width) / element.viewport_width;
    let sy = f64::from(image_height) / element.viewport_height;
    let left = (element.x * sx).max(0.0).floor();
    let top = (element.y * sy).max(0.0).floor();
    let right = ((element.x + element.width) * sx)
        .min(f64::from(image_width))
        .ceil();
    let bottom = ((element.y + element.height) * sy)
        .min(f64::from(image_height))
        .ceil();
    (right > left && bottom > top).then_some(Region {
        x: left as u32,
        y: top as u32,
        width: (right - left) as u32,
        height: (bottom - top) as u32,
    })
}

/// The size an image of `width`×`height` is drawn at to fit `max_width`×`max_height`: its
/// aspect kept, never enlarged, at least 1×1.
pub fn fit(width: u32, height: u32, max_width: u32, max_height: u32) -> (u32, u32) {
    if width == 0 || height == 0 {
        return (width.max(1), height.max(1));
    }
    let scale = f64::min(
        1.0,
        f64::min(
            f64::from(max_width) / f64::from(width),
            f64::from(max_height) / f64::from(height),
        ),
    );
    let side = |n: u32| ((f64::from(n) * scale).floor() as u32).max(1);
    (side(width), side(height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_the_aspect_and_never_enlarges() {
        assert_eq!(fit(2000, 1000, 1024, 1024), (1024, 512));
        assert_eq!(fit(1000, 2000, 1024, 768), (384, 768));
        assert_eq!(fit(800, 600, 1024, 1024), (800, 600));
        assert_eq!(fit(10_000, 1, 100, 100), (100, 1));
        assert_eq!(fit(0, 0, 100, 100), (1, 1));
    }

    #[test]
    fn a_frames_element_is_clipped_to_the_frame_and_moved_by_where_it_sits() {
        let in_frame = ElementBox {
            x: 250.0,
            y: -10.0,
            width: 100.0,
            height: 40.0,
            viewport_width: 300.0,
            viewport_height: 150.0,
            within: Vec::new(),
        };
        let frame = FrameBox {
            x: 20.0,
            y: 500.0,
            viewport_width: 1024.0,
            viewport_height: 768.0,
        };
        assert_eq!(
            in_frame.in_parent(&frame),
            ElementBox {
                x: 270.0,
                y: 500.0,
                width: 50.0,
                height: 30.0,
                viewport_width: 1024.0,
                viewport_height: 768.0,
                within: Vec::new(),
            }
        );
        // The same through a same-origin frame the page reported, then an outer one.
        let outer = FrameBox {
            x: 5.0,
            y: 7.0,
            viewport_width: 1280.0,
            viewport_height: 800.0,
        };
        let nested = ElementBox {
            within: vec![frame, outer],
            ..in_frame.clone()
        };
        let top = nested.in_top();
        assert_eq!(
            (top.x, top.y, top.width, top.height),
            (275.0, 507.0, 50.0, 30.0)
        );
        assert_eq!((top.viewport_width, top.within.len()), (1280.0, 0));
        // Scrolled out of the frame: nothing of it shows in the parent.
        let out = ElementBox {
            y: 200.0,
            ..in_frame
        };
        let moved = out.in_parent(&frame);
        assert_eq!(moved.height, 0.0);
        assert_eq!(crop(&moved, 1024, 768), None);
    }

    #[test]
    fn a_page_tool_does_not_act_on_a_tab_that_moved_to_another_origin() {
        let allowed = "http://127.0.0.1:8000";
        assert!(
            still_shows(
                3,
                allowed,
                "http://127.0.0.1:8000/x#y",
                "the page tool did not act"
            )
            .is_ok()
        );
        let moved = still_shows(
            3,
            allowed,
            "https://evil.example/",
            "the page tool did not act",
        )
        .unwrap_err();
        assert_eq!(moved.code, ErrorCode::Navigated);
        assert_eq!(
            moved.message,
            "tab 3 now shows https://evil.example, not http://127.0.0.1:8000: the page tool did \
             not act; call again"
        );
        // A tab gone (no URL) is no website either.
        assert!(still_shows(3, allowed, "", "the page tool did not act").is_err());
    }

    #[test]
    fn crop_maps_css_pixels_to_the_images_and_clips_to_the_viewport() {
        let element = ElementBox {
            x: 10.0,
            y: 20.0,
            width: 100.0,
            height: 50.0,
            viewport_width: 800.0,
            viewport_height: 600.0,
            within: Vec::new(),
        };
        // A device pixel ratio of 2.
        assert_eq!(
            crop(&element, 1600, 1200),
            Some(Region {
                x: 20,
                y: 40,
                width: 200,
                height: 100
            })
        );
        let half_out = ElementBox {
            x: -50.0,
            y: 580.0,
            ..element.clone()
        };
        assert_eq!(
            crop(&half_out, 800, 600),
            Some(Region {
                x: 0,
                y: 580,
                width: 50,
                height: 20
            })
        );
        let below = ElementBox {
            y: 700.0,
            ..element.clone()
        };
        assert_eq!(crop(&below, 800, 600), None);
        let empty = ElementBox {
            width: 0.0,
            ..element
        };
        assert_eq!(crop(&empty, 800, 600), None);
    }

    #[test]
    fn ops_travel_as_tagged_json() {
        let op = BrowserOp::Tab {
            tab: 4,
            action: TabAction::Back,
        };
        let json = serde_json::to_value(&op).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "tab", "tab": 4, "action": "back"})
        );
        assert_eq!(serde_json::from_value::<BrowserOp>(json).unwrap(), op);
        let capture = serde_json::json!({"kind": "capture", "tab": 1, "origin": "http://a",
            "max_width": 10, "max_height": 10, "format": "png"});
        assert!(matches!(
            serde_json::from_value::<BrowserOp>(capture).unwrap(),
            BrowserOp::Capture(Capture { element: None, .. })
        ));
        let unknown = serde_json::json!({"kind": "format_disk"});
        assert!(serde_json::from_value::<BrowserOp>(unknown).is_err());
    }

    #[test]
    fn tab_actions_parse_their_names_only() {
        for action in TabAction::ALL {
            assert_eq!(TabAction::parse(action.as_str()), Some(action));
        }
        assert_eq!(TabAction::parse("Back"), None);
    }

    #[test]
    fn the_default_tab_is_the_focused_windows_web_tab() {
        let tab = |id, url: &str, active, focused_window| BrowserTab {
            id,
            url: url.into(),
            title: String::new(),
            active,
            focused_window,
        };
        let list = TabList {
            agents: None,
            tabs: vec![
                tab(1, "https://a.example/", true, false),
                tab(2, "chrome://newtab/", true, true),
                tab(3, "https://b.example/", false, true),
            ],
        };
        // The focused window shows no web page: another window's selected web tab.
        assert_eq!(list.default_tab().map(|t| t.id), Some(1));
        let list = TabList {
            agents: None,
            tabs: vec![
                tab(1, "https://a.example/", true, false),
                tab(3, "https://b.example/", true, true),
            ],
        };
        assert_eq!(list.default_tab().map(|t| t.id), Some(3));
        assert_eq!(
            TabList {
                tabs: vec![],
                agents: None
            }
            .default_tab(),
            None
        );
    }
}
