//! Plain-text PDF documents: receipts, completed forms.
//!
//! A [`TextDocument`] is written top to bottom like a typewriter page: bold headings, wrapped
//! paragraphs, small labels above their values, vertical gaps and a fill colour. It breaks pages
//! by itself (A4 portrait, 56 pt margins) and stops after a bounded number of pages with a line
//! saying that the rest was cut, so that no input can make a huge PDF. The builtin Helvetica
//! fonts in WinAnsiEncoding are used (nothing embedded: small output, umlauts and ß print as
//! such, characters outside Windows-1252 become `?`), and the same calls always give the same
//! bytes.

mod text;

use chrono::{DateTime, Datelike, Timelike, Utc};
use pdf_writer::{Content, Date, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

pub(crate) use text::to_win_ansi;
use text::wrap;

/// A4 portrait, in PDF points.
const PAGE_WIDTH: f32 = 595.0;
const PAGE_HEIGHT: f32 = 842.0;
const MARGIN: f32 = 56.0;
const TEXT_WIDTH: f32 = PAGE_WIDTH - 2.0 * MARGIN;
/// Top edge of the text area: the first line of a page hangs from here.
const TOP: f32 = PAGE_HEIGHT - MARGIN;
/// How far below its baseline a line may reach (Helvetica's descenders), as a share of the size;
/// a line only goes on a page if that much room is left above the bottom margin.
const DESCENT: f32 = 0.25;

/// The page bound of [`TextDocument::new`]; at the smallest font size this is still far more
/// text than any receipt or form holds.
pub const MAX_PAGES: usize = 50;

/// Font sizes are kept in this range, so that every line fits on a page and the number of lines
/// a page can hold is bounded.
const MIN_SIZE: f32 = 4.0;
const MAX_SIZE: f32 = 72.0;

/// Size of the labels above values ([`TextDocument::label`]) and of the values below them
/// ([`TextDocument::field`]).
const LABEL_SIZE: f32 = 9.0;
const VALUE_SIZE: f32 = 11.0;
/// Space after a [`TextDocument::field`].
const FIELD_GAP: f32 = 7.0;

/// The line closing a document cut at its page bound, and its size.
const CUT_NOTICE_SIZE: f32 = 9.0;

/// The text of that line.
fn cut_notice(max_pages: usize) -> String {
    format!("… Gekürzt: Das Dokument ist auf {max_pages} Seiten begrenzt, der weitere Text fehlt.")
}

const FONT_REGULAR: Name<'static> = Name(b"F1");
const FONT_BOLD: Name<'static> = Name(b"F2");

/// A plain-text PDF being written top to bottom; [`TextDocument::render`] gives its bytes.
pub struct TextDocument {
    title: String,
    author: String,
    created: DateTime<Utc>,
    max_pages: usize,
    /// Pages already full.
    full: Vec<Content>,
    /// The page being written.
    page: Content,
    /// Top of the next line on the current page.
    y: f32,
    /// The fill colour in force, set again at the top of every new page.
    colour: [f32; 3],
    /// Set once the page bound was reached: everything written afterwards is dropped.
    cut: bool,
}

impl TextDocument {
    /// An empty document of at most [`MAX_PAGES`] pages. `title`, `author` and `created` go into
    /// the document information; `created` is given rather than read from the clock so that
    /// rendering stays deterministic.
    pub fn new(title: &str, author: &str, created: DateTime<Utc>) -> Self {
        Self::with_max_pages(title, author, created, MAX_PAGES)
    }

    /// Like [`TextDocument::new`] with a lower page bound (kept within 1 to [`MAX_PAGES`]).
    pub fn with_max_pages(
        title: &str,
        author: &str,
        created: DateTime<Utc>,
        max_pages: usize,
    ) -> Self {
        Self {
            title: title.to_owned(),
            author: author.to_owned(),
            created,
            max_pages: max_pages.clamp(1, MAX_PAGES),
            full: Vec::new(),
            page: Content::new(),
            y: TOP,
            colour: [0.0, 0.0, 0.0],
            cut: false,
        }
    }

    /// Bold text of `size` points, wrapped, at most `max_lines` lines (cut with an ellipsis):
    /// titles, section headings, warnings. It starts a new page rather than end one with nothing
    /// after it.
    pub fn heading(&mut self, text: &str, size: f32, max_lines: usize) {
        let size = clamp_size(size);
        self.keep_room(line_height(size) + line_height(VALUE_SIZE));
        self.lines(text, FONT_BOLD, size, max_lines);
    }

    /// Regular text of `size` points, wrapped, at most `max_lines` lines (cut with an ellipsis).
    /// It continues on a new page where the current one is full.
    pub fn paragraph(&mut self, text: &str, size: f32, max_lines: usize) {
        self.lines(text, FONT_REGULAR, clamp_size(size), max_lines);
    }

    /// A small bold line naming the value below it; kept on one page with that value's first
    /// line.
    pub fn label(&mut self, text: &str) {
        self.keep_room(line_height(LABEL_SIZE) + line_height(VALUE_SIZE));
        self.lines(text, FONT_BOLD, LABEL_SIZE, 1);
    }

    /// A labelled fact: its [`TextDocument::label`], the value below it (at most `max_lines`
    /// lines) and a small gap.
    pub fn field(&mut self, label: &str, value: &str, max_lines: usize) {
        self.label(label);
        self.lines(value, FONT_REGULAR, VALUE_SIZE, max_lines);
        self.gap(FIELD_GAP);
    }

    /// Vertical space of `points`; at the end of a page it is simply used up.
    pub fn gap(&mut self, points: f32) {
        if points.is_finite() && points > 0.0 {
            self.y -= points;
        }
    }

    /// The fill colour (components 0 to 1) of everything written from now on.
    pub fn colour(&mut self, r: f32, g: f32, b: f32) {
        let component = |c: f32| {
            if c.is_finite() {
                c.clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        self.colour = [component(r), component(g), component(b)];
        if !self.cut {
            let [r, g, b] = self.colour;
            self.page.set_fill_rgb(r, g, b);
        }
    }

    /// The pages written so far, the current one included.
    pub fn page_count(&self) -> usize {
        self.full.len() + 1
    }

    /// The PDF: one A4 page per page written, the builtin fonts, the document information.
    pub fn render(self) -> Vec<u8> {
        let mut contents = self.full;
        contents.push(self.page);
        let count = contents.len();

        // Object numbers: catalog 1, page tree 2, the first page 3 with its content 6, fonts 4 and
        // 5, information 7; further pages from 8 on (page, content). This is the numbering the
        // one-page receipt always had, so that a receipt's bytes stay what they were.
        let catalog_id = Ref::new(1);
        let page_tree_id = Ref::new(2);
        let regular_id = Ref::new(4);
        let bold_id = Ref::new(5);
        let info_id = Ref::new(7);
        // `count` is at most MAX_PAGES, so it fits an i32.
        let page_ids: Vec<(Ref, Ref)> = (0..count as i32)
            .map(|index| match index {
                0 => (Ref::new(3), Ref::new(6)),
                _ => (Ref::new(6 + 2 * index), Ref::new(7 + 2 * index)),
            })
            .collect();

        let mut pdf = Pdf::new();
        pdf.catalog(catalog_id).pages(page_tree_id);
        pdf.pages(page_tree_id)
            .kids(page_ids.iter().map(|&(page, _)| page))
            .count(count as i32);

        for &(page_id, content_id) in &page_ids {
            let mut page = pdf.page(page_id);
            page.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT));
            page.parent(page_tree_id);
            page.contents(content_id);
            {
                let mut resources = page.resources();
                let mut fonts = resources.fonts();
                fonts.pair(FONT_REGULAR, regular_id);
                fonts.pair(FONT_BOLD, bold_id);
            }
            page.finish();
        }

        // WinAnsiEncoding is what makes single-byte umlauts render as umlauts with the builtin
        // fonts.
        pdf.type1_font(regular_id)
            .base_font(Name(b"Helvetica"))
            .encoding_predefined(Name(b"WinAnsiEncoding"));
        pdf.type1_font(bold_id)
            .base_font(Name(b"Helvetica-Bold"))
            .encoding_predefined(Name(b"WinAnsiEncoding"));

        for (content, &(_, content_id)) in contents.into_iter().zip(&page_ids) {
            pdf.stream(content_id, &content.finish());
        }

        let mut info = pdf.document_info(info_id);
        info.title(TextStr(&self.title));
        info.author(TextStr(&self.author));
        info.producer(TextStr("meldewerk"));
        info.creation_date(pdf_date(self.created));
        info.finish();

        pdf.finish()
    }

    /// Writes `text` wrapped to the text width, at most `max_lines` lines, breaking pages as
    /// needed.
    fn lines(&mut self, text: &str, font: Name, size: f32, max_lines: usize) {
        if self.cut {
            return;
        }
        // More lines than the whole document can hold would be cut anyway; wrapping them would
        // only cost time.
        let max_lines = max_lines.min(self.max_pages * lines_per_page(MIN_SIZE));
        let leading = size * 1.25;
        for line in wrap(text, size, font == FONT_BOLD, TEXT_WIDTH, max_lines) {
            if !self.room_for(line_height(size)) {
                self.next_page();
                if self.cut {
                    return;
                }
            }
            self.y -= size;
            self.page
                .begin_text()
                .set_font(font, size)
                .next_line(MARGIN, self.y)
                .show(Str(&line))
                .end_text();
            self.y -= leading - size;
        }
    }

    /// Starts a new page unless `height` points are left on this one (or this one is still
    /// empty: a new page would not have more room).
    fn keep_room(&mut self, height: f32) {
        if !self.cut && self.y < TOP && !self.room_for(height) {
            self.next_page();
        }
    }

    /// Whether `height` points fit between the next line's top and the bottom of the text area.
    /// On the last allowed page the bottom is raised by the notice that may have to go there.
    fn room_for(&self, height: f32) -> bool {
        let mut bottom = MARGIN;
        if self.page_count() == self.max_pages {
            bottom += line_height(CUT_NOTICE_SIZE);
        }
        self.y - height >= bottom
    }

    /// Continues on a fresh page or, at the page bound, closes the document with the notice.
    fn next_page(&mut self) {
        if self.page_count() >= self.max_pages {
            self.cut = true;
            self.page.set_fill_rgb(0.0, 0.0, 0.0);
            // Room for the notice was kept free on this page; a gap may have used it up.
            self.y = self.y.max(MARGIN + line_height(CUT_NOTICE_SIZE)) - CUT_NOTICE_SIZE;
            self.page
                .begin_text()
                .set_font(FONT_REGULAR, CUT_NOTICE_SIZE)
                .next_line(MARGIN, self.y)
                .show(Str(&to_win_ansi(&cut_notice(self.max_pages))))
                .end_text();
            return;
        }
        let full = std::mem::replace(&mut self.page, Content::new());
        self.full.push(full);
        self.y = TOP;
        // A new page starts in the default colour, black.
        if self.colour != [0.0, 0.0, 0.0] {
            let [r, g, b] = self.colour;
            self.page.set_fill_rgb(r, g, b);
        }
    }
}

/// `size` within [`MIN_SIZE`]..=[`MAX_SIZE`]; the default body size for nonsense.
fn clamp_size(size: f32) -> f32 {
    if size.is_finite() {
        size.clamp(MIN_SIZE, MAX_SIZE)
    } else {
        VALUE_SIZE
    }
}

/// Room a line of `size` needs: the size itself and the descenders below the baseline.
fn line_height(size: f32) -> f32 {
    size * (1.0 + DESCENT)
}

/// How many lines of `size` fit on one page.
fn lines_per_page(size: f32) -> usize {
    ((TOP - MARGIN) / (size * 1.25)) as usize + 1
}

/// `at` as a PDF date in UTC.
fn pdf_date(at: DateTime<Utc>) -> Date {
    // The PDF date type only holds years 0..=9999; chrono's range is wider.
    let year = u16::try_from(at.year().clamp(0, 9999)).unwrap_or(0);
    Date::new(year)
        .month(at.month() as u8)
        .day(at.day() as u8)
        .hour(at.hour() as u8)
        .minute(at.minute() as u8)
        .second(at.second().min(59) as u8)
        .utc_offset_hour(0)
        .utc_offset_minute(0)
}
