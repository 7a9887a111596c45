//! Whether a task says what to do on its own. A prompt such as "yes", "1", "push", "resume" or
//! "you run it" answers the conversation it was typed into: the same words in another session ask
//! for something else. A plan stored from such a turn is that conversation's work, and serving it
//! as a hit for the same words elsewhere would tell the agent something false. So no plan is
//! stored for such a task, and a lookup for one serves and suggests nothing.
//!
//! The rule is deliberately plain: after replies, fillers and bare numbers are set aside, a task
//! must name at least two things, and at least one of them must be something acted on (a noun or a
//! value such as a path or an identifier), not only actions ("commit and push" acts on whatever the
//! conversation was about); or it must hold a value with any word beside it ("what does E0308
//! mean?"). Text in scripts written without spaces counts by its characters. A one-word command
//! ("tmux") does not stand alone either: typed to an agent, it is as often an answer.

use super::lexicon;

/// Words that answer or steer a conversation rather than say what to do.
const CONVERSATIONAL: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "no",
    "nope",
    "nah",
    "ok",
    "okay",
    "k",
    "sure",
    "thanks",
    "thank",
    "thx",
    "ty",
    "go",
    "ahead",
    "continue",
    "proceed",
    "resume",
    "retry",
    "again",
    "hi",
    "hello",
    "hey",
    "done",
    "right",
    "correct",
    "good",
    "great",
    "fine",
    "agree",
    "cool",
    "nice",
    "perfect",
    "exactly",
    "try",
    "do",
    "does",
    "did",
    "same",
    "above",
    "previous",
    "one",
    "option",
    "both",
    "neither",
    "first",
    "second",
    "third",
    "last",
    "next",
    "what",
    "why",
    "who",
    "whats",
    "what's",
    "is",
    "are",
    "was",
    "were",
    "am",
    "not",
    "don't",
    "dont",
    "didn't",
    "didnt",
    "doesn't",
    "doesnt",
    "see",
    "think",
    "mean",
    "look",
    "looks",
    "those",
    "these",
    "them",
    "they",
    "here",
    "wait",
    "stop",
    "keep",
    "going",
    "well",
    "hmm",
    "about",
    "thing",
    "things",
    "stuff",
    "one's",
    "ones",
    "instead",
    "still",
    "more",
    "less",
    "too",
    "very",
    "really",
    "actually",
    "maybe",
    "again?",
    "already",
    "yet",
    "it's",
    "that's",
    "i'm",
    "im",
    "ill",
    "i'll",
    "you're",
    "youre",
    "whatever",
    "anything",
    "something",
    "everything",
    "lgtm",
];

/// Actions that act on whatever the conversation was about, beyond the lexicon's verbs.
const ACTIONS: &[&str] = &[
    "commit", "push", "pull", "merge", "rebase", "deploy", "verify", "check", "test", "run", "build", "undo", "revert",
    "apply", "open", "login", "save", "ship", "release", "finish", "start", "restart", "show", "explain", "review",
];

/// Words after which the next word is a thing, even when it could be an action ("the tests").
const DETERMINERS: &[&str] = &["the", "a", "an", "all", "my", "our", "your", "this", "that", "these", "those", "every"];

/// Why a task does not stand on its own, or `None` when it does.
pub fn refusal(task: &str) -> Option<String> {
    if stands_alone(task) {
        return None;
    }
    let shown: String = task.trim().chars().take(60).collect();
    Some(format!(
        "the task \"{shown}\" does not say what to do on its own: it answers the conversation it was typed in, so no stored plan is served, suggested or stored for it; ask or store the task as someone would from scratch, naming what to act on (e.g. \"add the serde dependency to Cargo.toml\")"
    ))
}

/// True when the task names at least two things, one of them something acted on.
pub fn stands_alone(task: &str) -> bool {
    let (mut named, mut objects, mut values, mut words) = (0usize, 0usize, 0usize, 0usize);
    let mut after_determiner = false;
    for raw in task.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '!' | '?' | '(' | ')' | '"' | '`')) {
        let word = raw.trim_matches(|c: char| matches!(c, '.' | ':' | '\'' | '*' | '[' | ']' | '{' | '}' | '<' | '>'));
        if word.is_empty() {
            continue;
        }
        // Scripts written without spaces: every two characters are a word, all of them things.
        let unspaced = word.chars().filter(|c| is_unspaced(*c)).count();
        if unspaced > 0 {
            let n = unspaced.div_ceil(2);
            named += n;
            objects += n;
            continue;
        }
        let lower = word.to_lowercase();
        let determined = std::mem::replace(&mut after_determiner, DETERMINERS.contains(&lower.as_str()));
        if !lower.chars().any(char::is_alphabetic) {
            continue; // a bare number or symbol: an answer to a numbered question
        }
        let value = lower.chars().any(|c| !c.is_alphabetic() && c != '\'');
        words += 1;
        values += usize::from(value);
        if !value
            && (lower.chars().count() < 2
                || lexicon::STOPWORDS.contains(&lower.as_str())
                || CONVERSATIONAL.contains(&lower.as_str()))
        {
            continue;
        }
        named += 1;
        let action = lexicon::verb(&lower).is_some() || ACTIONS.contains(&lower.as_str());
        if value || determined || !action {
            objects += 1;
        }
    }
    // A value (a path, an identifier, an error code) with any word around it is a question about
    // that thing ("what does E0308 mean?"); alone it is an answer ("helium.desktop").
    (named >= 2 && objects >= 1) || (values >= 1 && words >= 2)
}

/// Characters of scripts written without spaces between words (CJK, Thai, Lao, Khmer, Myanmar).
fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x3040..=0x30FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_to_the_conversation_do_not_stand_alone() {
        // Prompts that real sessions repeat, each meaning something else every time.
        for t in [
            "yes",
            "1",
            "3.",
            "6",
            "resume",
            "verify",
            "you run it",
            "push",
            "commit",
            "hi",
            "continue",
            "do it",
            "go ahead",
            "try again",
            "I dont see it?",
            "update your about",
            "commit and push",
            "whoami",
            "helium.desktop",
            "\\documents\\M-Claude",
            "ok, do that",
            "option 2",
            "fix it",
            "yes please",
        ] {
            assert!(!stands_alone(t), "{t:?} answers a conversation");
            assert!(refusal(t).is_some_and(|r| r.contains("from scratch")), "{t:?}");
        }
    }

    #[test]
    fn tasks_that_name_what_to_act_on_stand_alone() {
        for t in [
            "add the serde dependency to Cargo.toml",
            "install usage4claude",
            "ssh into slate-ssh.thisness.us",
            "run the tests",
            "bump the version to 1.2.3",
            "rename parse_config to load_config",
            "find files larger than 10M",
            "login to git",
            "install gh (CLI)",
            "把这个函数重命名",
            "fix the failing test in src/lib.rs",
            "what does E0308 mean?",
            "what needs libssl3?",
        ] {
            assert!(stands_alone(t), "{t:?} says what to do");
            assert!(refusal(t).is_none());
        }
    }
}
