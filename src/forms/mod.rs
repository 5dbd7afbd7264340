//! The HTML frame shared by every page end users see.

use maud::{html, Markup, PreEscaped, DOCTYPE};

const STYLE: &str = r#"
body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.5rem}fieldset{border:1px solid #bbb;border-radius:6px;margin:1rem 0;padding:.5rem 1rem 1rem}
legend{font-weight:600}label{display:block;margin-top:.6rem;font-size:.95rem}
input[type=text],input[type=date],input[type=time],input[type=number],select{width:100%;padding:.35rem;box-sizing:border-box;font-size:1rem}
input[aria-invalid=true],select[aria-invalid=true]{border:2px solid #b00020}
.check label{display:inline;margin-left:.3rem}.error{color:#b00020}.errors{border:2px solid #b00020;padding:.5rem 1rem;border-radius:6px}
.datetime{display:flex;gap:.5rem}
button{margin-top:1rem;padding:.6rem 1.4rem;font-size:1rem}.note{background:#f3f6fa;padding:.6rem 1rem;border-radius:6px}
.hint{color:#444;font-size:.9rem;margin:.2rem 0 0}.required{color:#b00020;font-weight:600}.count{color:#b00020;font-weight:400}
details{border:1px solid #bbb;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}summary{font-weight:600;cursor:pointer}
details fieldset{border:0;margin:0;padding:0}.group{margin:.4rem 0}button.more{margin-top:.6rem;padding:.3rem .8rem;font-size:.9rem}
.fields{display:grid;grid-template-columns:repeat(auto-fill,minmax(18rem,1fr));column-gap:1.2rem}.field{min-width:0}
.default,.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;margin:0;padding:0;border:0}
"#;

/// The read-only summary of a sent report, and every page on paper: black on white, without
/// buttons, forms and links' colours, a section never split across pages.
const SUMMARY_AND_PRINT_STYLE: &str = r#"
dl.facts div,.summary dl div{display:flex;gap:1rem;padding:.2rem 0;border-bottom:1px solid #e3e3e3}
dl.facts dt,.summary dt{font-weight:600;flex:0 0 40%}dl.facts dd,.summary dd{margin:0;overflow-wrap:anywhere}
h3{font-size:1.05rem;margin:1.2rem 0 .3rem}
@media print{
body{color:#000;background:#fff;max-width:none;margin:0;padding:0;font-size:11pt}
form,button,.screen-only{display:none}
a{color:#000;text-decoration:none}
.note{background:none;padding:0}
section,fieldset,dl.facts,dl>div{break-inside:avoid}
h1,h2,h3{break-after:avoid}
}
"#;

/// A complete page with `title` and `body`.
pub fn page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="de" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " – meldewerk" }
                style { (PreEscaped(STYLE)) (PreEscaped(SUMMARY_AND_PRINT_STYLE)) }
            }
            body { main { (body) } }
        }
    }
}
