//! What the web view's parts pass each other: the [`Route`] a request asks
//! for, an [`ActionRefusal`] of an action, a finished [`Page`], and the [`Site`]
//! a page is made from.

/// What a request asks for, once its path and query are read. Ids are
/// checked as record ids; nothing here is a file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/`: the task list, with its filter (`?state=…&q=…`).
    Tasks { state: Option<String>, query: Option<String> },
    /// `/tasks/<id>`: a task's timeline; with what an action posted from
    /// it (review, land) was refused for, shown above it (the server
    /// sends the page with a 4xx status).
    Task { id: String, refused: Option<ActionRefusal> },
    /// `/tasks/<id>/timeline`: the timeline alone, for live updates.
    Timeline { id: String },
    /// `/tasks/<id>/attempts/<n>?against=base|previous&layout=unified|split`.
    Attempt { id: String, n: u32, against: Against, layout: PageLayout },
    /// `/tasks/<id>/attempts/<n>/prompt`: the prompt it received.
    Prompt { id: String, n: u32 },
    /// `/tasks/<id>/attempts/<n>/checks/<check>`: a check's full output.
    CheckOutput { id: String, n: u32, check: String },
    /// `/tasks/<id>/lanes`: the lanes side by side.
    Lanes { id: String },
    /// `/stats`: the charts.
    Stats,
}

/// Why an action posted from a task's page was refused: the error's
/// message and what to do, as the command line would print them (text
/// from the record in them: the pages escape it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActionRefusal {
    /// `review` or `land`.
    pub action: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Against {
    #[default]
    Base,
    Previous,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum PageLayout {
    #[default]
    Unified,
    Split,
}

/// A page as the server sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

/// Where the pages read from: the repository and its record.
pub(crate) struct Site<'a> {
    pub repo: &'a crate::git::Repo,
    pub store: &'a crate::record::Store,
    /// Each record's summary, kept while its log is unchanged (the task
    /// list reads again only the logs written since it was last asked).
    pub summaries: &'a crate::record::Summaries,
    /// The token every form carries (the server checks it on POST).
    pub token: &'a str,
}
