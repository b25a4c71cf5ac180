//! The study page's language-model panel: pick a model the server holds (or upload one), score
//! every bug and transformation with it as a background job, and watch the job's progress.

use leptos::prelude::*;

use crate::components::refresh::Refresh;
use crate::components::status::ErrorBox;
use crate::study_api::{get_scoring, DeleteModel, RetryJob, StartScoring, StartVerify, StopJob};
use natstudy_types::StudyId;
use natstudy_types::{JobRow, ScoringView};

/// A size in the binary unit it reads best in, one decimal.
fn size(bytes: u64) -> String {
    size_in(bytes, bytes)
}

/// `n` bytes in the unit `whole` reads best in (KiB to TiB, one decimal; bytes under a KiB),
/// so that a part and its whole read alike: "4.6 GiB of 12.6 GiB", never "4645.1 MiB of
/// 12.6 GiB"; none is "0".
fn size_in(n: u64, whole: u64) -> String {
    if n == 0 {
        return "0".into();
    }
    let (unit, name) = if whole >= 1 << 40 {
        (1u64 << 40, "TiB")
    } else if whole >= 1 << 30 {
        (1 << 30, "GiB")
    } else if whole >= 1 << 20 {
        (1 << 20, "MiB")
    } else if whole >= 1 << 10 {
        (1 << 10, "KiB")
    } else {
        return format!("{n} B");
    };
    format!("{:.1} {name}", n as f64 / unit as f64)
}

#[component]
pub fn Scoring(study: StudyId) -> impl IntoView {
    let start = ServerAction::<StartScoring>::new();
    let retry = ServerAction::<RetryJob>::new();
    let stop = ServerAction::<StopJob>::new();
    let verify = ServerAction::<StartVerify>::new();
    let delete = ServerAction::<DeleteModel>::new();
    let upload = Upload::new();
    // jobs' progress: read again a second after each answer
    let refresh = Refresh::after(std::time::Duration::from_secs(1));
    let view_data = Resource::new(
        move || {
            (
                refresh.tick(),
                start.version().get(),
                retry.version().get(),
                stop.version().get(),
                verify.version().get(),
                delete.version().get(),
            )
        },
        move |_| refresh.read(get_scoring(study)),
    );
    view! {
        <section class="card" id="scoring">
            <h2>"Cross-entropy from a language model"</h2>
            <p class="muted">"Scores every bug and transformation with an n-gram model (trained with "<code>"natstudy lm train"</code>") or a neural one (a GGUF file, or a Hugging Face folder: its config.json, tokenizer.json and *.safetensors; other files of the folder are skipped); the RNC analysis then uses the scores under the model's name."</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match view_data.await {
                        Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                        Ok(v) => view! { <ScoringPanel study v start jobs=(retry, stop) delete /> }.into_any(),
                    }
                })}
            </Transition>
            {move || start.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
            {move || retry.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
            {move || stop.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
            {move || delete.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
            // without the page's script a form posts as any form and the browser shows the
            // answer; with it, the upload's progress and a refusal show here
            <form method="post" enctype="multipart/form-data" action=format!("/studies/{study}/models") class="row" id="model-upload-form" on:submit=upload.submit()>
                <input type="file" name="model" id="model-file" accept=".arpa,.bin,.gguf" required aria-label="Model file (ARPA, binary or GGUF)" />
                <button type="submit" id="model-upload">"Upload a model"</button>
            </form>
            <form method="post" enctype="multipart/form-data" action=format!("/studies/{study}/models") class="row" id="folder-upload-form" on:submit=upload.submit()>
                <input type="text" name="folder" id="folder-name" placeholder="folder name (optional)" maxlength="100" aria-label="Model folder name (the chosen folder's own name if left empty)" />
                <input type="file" name="files" id="folder-files" webkitdirectory="" multiple required aria-label="Hugging Face model folder (config.json, tokenizer.json, *.safetensors)" />
                <button type="submit" id="folder-upload">"Upload a model folder"</button>
            </form>
            {move || upload.sending.get().map(|(sent, of)| view! {
                <p id="model-sending"><progress max=of.max(1) value=sent></progress>" " {sending(sent, of)}</p>
            })}
            {move || upload.refused.get().map(|why| view! { <pre class="error" id="model-upload-error">{why}</pre> })}
            <h3>"Verification"</h3>
            <p class="muted">"Puts every transformed method back into its file and compiles it with javac (its original first: an item whose original does not compile is reported as not checked). Results go to the items export and the benchmark export, and batches can take only verified items. For a project's classpath or a test command, use "<code>"natstudy verify"</code>"."</p>
            <ActionForm action=verify attr:id="verify-form" attr:class="row">
                <input type="hidden" name="study" value=study.get() />
                <button type="submit" id="verify-start">"Verify items in the background"</button>
            </ActionForm>
            {move || verify.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        </section>
    }
}

#[component]
fn ScoringPanel(
    study: StudyId,
    v: ScoringView,
    start: ServerAction<StartScoring>,
    /// Run a job again, stop one.
    jobs: (ServerAction<RetryJob>, ServerAction<StopJob>),
    delete: ServerAction<DeleteModel>,
) -> impl IntoView {
    let actions = jobs;
    let ScoringView {
        models,
        jobs,
        quota_used,
        quota,
        memory_free,
    } = v;
    let none = models.is_empty();
    let listed = models.clone();
    view! {
        <ActionForm action=start attr:id="score-form" attr:class="row">
            <input type="hidden" name="study" value=study.get() />
            <select name="model" id="score-model" disabled=none aria-label="Language model">
                {models.into_iter().map(|m| {
                    let kind = if m.neural { "neural" } else { "n-gram" };
                    let label = format!("{} ({kind}, {})", m.name, size(m.bytes));
                    view! { <option value=m.name>{label}</option> }
                }).collect_view()}
            </select>
            <label><input type="checkbox" name="log10" />" −log10 per token (the published tool's unit)"</label>
            <button type="submit" id="score-start" disabled=none>"Score in the background"</button>
        </ActionForm>
        {none.then(|| view! { <p class="muted">"No model on the server yet: upload one below."</p> })}
        {(!none).then(|| view! {
            <ul class="models" id="models">
                {listed.into_iter().map(|m| {
                    let whose = if m.this_study { "uploaded for this study" } else { "shared" };
                    let name = m.name.clone();
                    view! {
                        <li>
                            <code>{m.name.clone()}</code>" " {format!("{} · {whose}", size(m.bytes))}
                            {m.memory.map(|need| format!(" · needs {} of memory to score", size(need)))}
                            {m.memory.zip(memory_free).filter(|(need, free)| need > free).map(|(_, free)| view! {
                                <span class="error model-too-big">{format!(" — more than the server's {} free: scoring it would be refused", size(free))}</span>
                            })}
                            {m.deletable.then(|| view! {
                                <ActionForm action=delete attr:class="inline">
                                    <input type="hidden" name="study" value=study.get() />
                                    <input type="hidden" name="name" value=name.clone() />
                                    <button type="submit" class="model-delete" aria-label=format!("Delete {name}")>"Delete"</button>
                                </ActionForm>
                            })}
                        </li>
                    }
                }).collect_view()}
            </ul>
        })}
        <p class="muted" id="model-quota">{format!("This study's models: {} of {}.", size(quota_used), size(quota))}</p>
        {if jobs.is_empty() {
            view! { <p class="muted" id="no-jobs">"No background job yet."</p> }.into_any()
        } else {
            view! {
                <table class="jobs" id="jobs">
                    <thead><tr><th>"Job"</th><th>"Progress"</th><th>"State"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
                    <tbody>{jobs.into_iter().map(|j| job_row(study, j, actions)).collect_view()}</tbody>
                </table>
            }.into_any()
        }}
    }
}

fn job_row(
    study: StudyId,
    j: JobRow,
    (retry, stop): (ServerAction<RetryJob>, ServerAction<StopJob>),
) -> impl IntoView {
    let shown = if j.stopping {
        format!("{} (stopping…)", j.state)
    } else {
        j.state.clone()
    };
    let state = if j.message.is_empty() {
        shown
    } else {
        format!("{shown}: {}", j.message)
    };
    let pace = pace(j.tokens, j.counting_ms, j.eta_ms);
    let bar = loading_bar(&j);
    let count = counted(
        &j.kind,
        &j.state,
        (j.done, j.total),
        (j.load_read, j.load_of),
    );
    let again = matches!(j.state.as_str(), "failed" | "stopped");
    let stoppable = matches!(j.state.as_str(), "queued" | "running") && !j.stopping;
    let id = j.id;
    let label = j.label.clone();
    // a click is answered at once, before the server is (a slow link takes seconds): the
    // button says what it is doing and takes no second click meanwhile — a second "Run again"
    // would start a second job
    let stopping = move || {
        stop.input()
            .with(|i| i.as_ref().is_some_and(|i| i.job == id))
    };
    let starting = move || {
        retry
            .input()
            .with(|i| i.as_ref().is_some_and(|i| i.job == id))
    };
    view! {
        <tr class=format!("job {}", j.state)>
            <td>{j.label}</td>
            <td>{bar}" " {count}
                {pace.map(|p| view! { <span class="job-pace">{p}</span> })}</td>
            <td class="job-state">{state}</td>
            <td>
                {again.then(|| view! {
                    <ActionForm action=retry attr:class="inline">
                        <input type="hidden" name="study" value=study.get() />
                        <input type="hidden" name="job" value=id.get() />
                        <button type="submit" class="job-retry" disabled=starting aria-busy=move || starting().to_string()>
                            {move || if starting() { "Starting…" } else { "Run again" }}
                        </button>
                    </ActionForm>
                })}
                {stoppable.then(|| view! {
                    <ActionForm action=stop attr:class="inline">
                        <input type="hidden" name="study" value=study.get() />
                        <input type="hidden" name="job" value=id.get() />
                        <button type="submit" class="job-stop secondary" aria-label=format!("Stop: {label}") disabled=stopping aria-busy=move || stopping().to_string()>
                            {move || if stopping() { "Stopping…" } else { "Stop" }}
                        </button>
                    </ActionForm>
                })}
            </td>
        </tr>
    }
}

/// A job's pace as its row reads it: " · 250 tokens/s · about 4 min left", as much of it as the
/// job can tell (tokens once it has counted for a second; the time left while it runs).
fn pace(tokens: i64, counting_ms: i64, eta_ms: Option<i64>) -> Option<String> {
    let rate = (tokens > 0 && counting_ms >= 1000)
        .then(|| format!(" · {} tokens/s", tokens.saturating_mul(1000) / counting_ms));
    let left = eta_ms.map(|ms| format!(" · about {} left", duration(ms)));
    match (rate, left) {
        (None, None) => None,
        (rate, left) => Some(format!(
            "{}{}",
            rate.unwrap_or_default(),
            left.unwrap_or_default()
        )),
    }
}

/// A model's upload from the page: sent with the page's script (XMLHttpRequest, which tells
/// the bytes sent), its progress shown, a refusal shown beside the form (the server answers it
/// as text: without the script the browser left the page for it), and once stored, the study
/// page the server sends it to.
#[derive(Clone, Copy)]
struct Upload {
    /// Bytes sent of all, while an upload runs.
    sending: RwSignal<Option<(u64, u64)>>,
    /// The server's answer to an upload it refused.
    refused: RwSignal<Option<String>>,
}

impl Upload {
    fn new() -> Upload {
        Upload {
            sending: RwSignal::new(None),
            refused: RwSignal::new(None),
        }
    }

    /// The forms' submit handler. Where the browser cannot send the form itself (no script
    /// yet, no `XMLHttpRequest`), the form posts as any form does.
    fn submit(self) -> impl Fn(leptos::ev::SubmitEvent) + Copy {
        move |ev| {
            #[cfg(feature = "hydrate")]
            self.send(ev);
            #[cfg(not(feature = "hydrate"))]
            let _ = (ev, self);
        }
    }

    #[cfg(feature = "hydrate")]
    fn send(self, ev: leptos::ev::SubmitEvent) {
        use leptos::wasm_bindgen::closure::Closure;
        use leptos::wasm_bindgen::JsCast;
        use leptos::web_sys::{FormData, HtmlFormElement, ProgressEvent, XmlHttpRequest};
        if self.sending.get_untracked().is_some() {
            // one upload at a time
            ev.prevent_default();
            return;
        }
        let Some(form) = ev
            .target()
            .and_then(|t| t.dyn_into::<HtmlFormElement>().ok())
        else {
            return;
        };
        let (Ok(data), Ok(xhr)) = (FormData::new_with_form(&form), XmlHttpRequest::new()) else {
            return;
        };
        if xhr.open("POST", &form.action()).is_err() {
            return;
        }
        ev.prevent_default();
        self.refused.set(None);
        self.sending.set(Some((0, 0)));
        let progress = Closure::<dyn FnMut(ProgressEvent)>::new(move |e: ProgressEvent| {
            self.sending
                .set(Some((e.loaded() as u64, e.total() as u64)));
        });
        // set before `send`: a request reports its upload only to handlers there by then
        let upload = xhr.upload().ok();
        if let Some(up) = &upload {
            up.set_onprogress(Some(progress.as_ref().unchecked_ref()));
        }
        if xhr.send_with_opt_form_data(Some(&data)).is_err() {
            if let Some(up) = &upload {
                up.set_onprogress(None);
            }
            self.sending.set(None);
            return;
        }
        let answered = xhr.clone();
        // called once, at the end, and freed then, with the progress handler: an upload
        // keeps nothing once it is over
        let done = Closure::once_into_js(move || {
            if let Some(up) = &upload {
                up.set_onprogress(None);
            }
            drop(progress);
            self.sending.set(None);
            let status = answered.status().unwrap_or(0);
            if (200..300).contains(&status) {
                // stored: the study page the server sent the upload to, the model chosen
                let to = answered.response_url();
                let _ = window().location().assign(&format!("{to}#scoring"));
            } else if status == 0 {
                self.refused.set(Some(
                    "the upload broke off: the connection to the server was lost".into(),
                ));
            } else {
                let why = answered.response_text().ok().flatten().unwrap_or_default();
                self.refused.set(Some(if why.trim().is_empty() {
                    format!("the server refused the upload (HTTP {status})")
                } else {
                    why
                }));
            }
        });
        xhr.set_onloadend(Some(done.unchecked_ref()));
    }
}

/// An upload's progress: "uploading… 37% (1.4 GiB of 3.8 GiB)".
fn sending(sent: u64, of: u64) -> String {
    if of == 0 {
        return "uploading…".into();
    }
    let sent = sent.min(of);
    format!(
        "uploading… {}% ({} of {})",
        u128::from(sent) * 100 / u128::from(of),
        size_in(sent, of),
        size(of)
    )
}

/// Whether a job is a scoring job loading its model: running, no steps yet.
fn loading(kind: &str, state: &str, total: i64) -> bool {
    total == 0 && kind == "score" && state == "running"
}

/// A job's bar: its model's bytes read while it loads, else its steps.
fn loading_bar(j: &JobRow) -> impl IntoView {
    let (value, max) = if loading(&j.kind, &j.state, j.total) && j.load_of > 0 {
        (j.load_read, j.load_of)
    } else {
        (j.done, j.total)
    };
    view! { <progress max=max.max(1) value=value></progress> }
}

/// A job's steps done of all. A running scoring job that has no steps yet is loading its
/// model (a 7B model takes minutes; "0/0" looked stuck): how much of it, once the load reads.
fn counted(kind: &str, state: &str, (done, total): (i64, i64), (read, of): (i64, i64)) -> String {
    if loading(kind, state, total) {
        if of <= 0 {
            return "loading the model…".into();
        }
        let read = read.clamp(0, of);
        let (part, whole) = (read.unsigned_abs(), of.unsigned_abs());
        return format!(
            "loading the model… {}% ({} of {})",
            u128::from(part) * 100 / u128::from(whole),
            size_in(part, whole),
            size(whole)
        );
    }
    let pct = if total > 0 { done * 100 / total } else { 0 };
    format!("{done}/{total} ({pct}%)")
}

/// A duration of `ms`, rounded up, in seconds, minutes, or hours and minutes.
fn duration(ms: i64) -> String {
    let secs = u64::try_from(ms).unwrap_or(0).div_ceil(1000).max(1);
    if secs < 60 {
        return format!("{secs} s");
    }
    let mins = secs.div_ceil(60);
    if mins < 60 {
        format!("{mins} min")
    } else {
        format!("{} h {} min", mins / 60, mins % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::{counted, duration, pace, sending, size, size_in};

    #[test]
    fn an_uploads_progress_in_its_units() {
        assert_eq!(sending(0, 0), "uploading…");
        assert_eq!(
            sending(1_500_000_000, 4_080_218_931),
            "uploading… 36% (1.4 GiB of 3.8 GiB)"
        );
        assert_eq!(sending(9, 4), "uploading… 100% (4 B of 4 B)");
    }

    #[test]
    fn sizes_read_in_their_unit() {
        assert_eq!(size(0), "0");
        assert_eq!(size(1), "1 B");
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1024), "1.0 KiB");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size_in(512, 4096), "0.5 KiB");
        assert_eq!(size(3 << 20), "3.0 MiB");
        assert_eq!(size(1 << 30), "1.0 GiB");
        assert_eq!(size(5 << 40), "5.0 TiB");
    }

    #[test]
    fn a_scoring_job_without_steps_is_loading_its_model() {
        let none = (0, 0);
        assert_eq!(
            counted("score", "running", none, none),
            "loading the model…"
        );
        // how much of it, once the load reads: a 7B model's bytes, a tiny one's
        assert_eq!(
            counted("score", "running", none, (4_987_654_321, 13_476_839_424)),
            "loading the model… 37% (4.6 GiB of 12.6 GiB)"
        );
        assert_eq!(
            counted("score", "running", none, (260_000, 1_346_912)),
            "loading the model… 19% (0.2 MiB of 1.3 MiB)"
        );
        // loaded: the steps, whatever the load read
        let loaded = (1_346_912, 1_346_912);
        assert_eq!(
            counted("score", "running", (12, 357), loaded),
            "12/357 (3%)"
        );
        // a queued job has not begun loading; a verification counts its bugs from the start
        assert_eq!(counted("score", "queued", none, none), "0/0 (0%)");
        assert_eq!(counted("verify", "running", none, none), "0/0 (0%)");
        assert_eq!(counted("score", "stopped", none, loaded), "0/0 (0%)");
        // whatever a row holds, no overflow
        assert_eq!(
            counted("score", "running", none, (i64::MAX, i64::MAX)),
            "loading the model… 100% (8388608.0 TiB of 8388608.0 TiB)"
        );
        assert_eq!(
            counted("score", "running", none, (-5, 1_000_000)),
            "loading the model… 0% (0 of 976.6 KiB)"
        );
    }

    #[test]
    fn a_jobs_pace_says_what_it_can() {
        assert_eq!(pace(0, 0, None), None);
        // tokens counted for less than a second make no rate yet
        assert_eq!(pace(40, 500, None), None);
        assert_eq!(
            pace(5_000, 20_000, Some(250_000)).as_deref(),
            Some(" · 250 tokens/s · about 5 min left")
        );
        // an n-gram or verification job counts no tokens: the time left only
        assert_eq!(
            pace(0, 3_000, Some(1_500)).as_deref(),
            Some(" · about 2 s left")
        );
        assert_eq!(pace(1_000, 2_000, None).as_deref(), Some(" · 500 tokens/s"));
    }

    #[test]
    fn durations_round_up_to_their_unit() {
        assert_eq!(duration(0), "1 s");
        assert_eq!(duration(59_000), "59 s");
        assert_eq!(duration(59_001), "1 min");
        assert_eq!(duration(60_001), "2 min");
        assert_eq!(duration(3_600_000), "1 h 0 min");
        assert_eq!(duration(8_100_000), "2 h 15 min");
        assert_eq!(duration(-5), "1 s");
    }
}
