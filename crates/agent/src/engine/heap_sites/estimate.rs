//! Owns the arithmetic of the fast mode's estimates: live fractions of sampled allocations and
//! their variances, the reconciliation of a class's estimates with its exact live count, and
//! shares of an exact total in proportion.

use crate::output::Site;

/// The sampled allocations of one bytecode site (all its traces): what they stand for, all
/// and live, and how many were sampled.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pooled {
    objects: u64,
    bytes: u64,
    live_objects: u64,
    live_bytes: u64,
    samples: f64,
}

impl Pooled {
    pub(super) fn of(sites: &[&Site], interval: u64) -> Pooled {
        let mut p = Pooled {
            objects: 0,
            bytes: 0,
            live_objects: 0,
            live_bytes: 0,
            samples: 0.0,
        };
        for s in sites {
            p.objects += s.allocated_objects;
            p.bytes += s.allocated_bytes;
            p.live_objects += s.live_objects.min(s.allocated_objects);
            p.live_bytes += s.live_bytes.min(s.allocated_bytes);
            // Objects smaller than the interval stand for interval / size each; larger ones
            // for themselves.
            let mean = s.allocated_bytes / s.allocated_objects.max(1);
            p.samples += if mean >= interval {
                s.allocated_objects as f64
            } else {
                s.allocated_bytes as f64 / interval.max(1) as f64
            };
        }
        p.samples = p.samples.max(1.0);
        p
    }

    fn fraction(part: u64, whole: u64) -> f64 {
        if whole == 0 {
            0.0
        } else {
            part.min(whole) as f64 / whole as f64
        }
    }

    /// Live (objects, bytes) of `n` objects and `b` bytes allocated at the site.
    pub(super) fn live(&self, n: u64, b: u64) -> (u64, u64) {
        (
            (n as f64 * Pooled::fraction(self.live_objects, self.objects)).round() as u64,
            (b as f64 * Pooled::fraction(self.live_bytes, self.bytes)).round() as u64,
        )
    }

    /// The variances of [`Pooled::live`]: n² p (1 − p) / samples.
    pub(super) fn variance(&self, n: u64, b: u64) -> (f64, f64) {
        (
            sampled_variance(
                n,
                Pooled::fraction(self.live_objects, self.objects),
                self.samples,
            ),
            sampled_variance(
                b,
                Pooled::fraction(self.live_bytes, self.bytes),
                self.samples,
            ),
        )
    }
}

/// The variance of `n` × a live fraction `p` estimated from `samples` sampled objects:
/// n² p̃ (1 − p̃) / samples, with p̃ the fraction given half a sample each way (so that no
/// sample live, or none dead, which a small fraction of many samples can show by chance,
/// still leaves room for a few).
fn sampled_variance(n: u64, p: f64, samples: f64) -> f64 {
    let smoothed = (p * samples + 0.5) / (samples + 1.0);
    (n as f64).powi(2) * smoothed * (1.0 - smoothed) / samples
}

/// The variance of a live estimate from the sampled allocations of `s` (sampled every
/// `interval` bytes), scaled to `n` objects and `b` bytes.
pub(super) fn jvmti_variance(s: &Site, interval: u64, n: u64, b: u64) -> (f64, f64) {
    let samples = Pooled::of(&[s], interval).samples;
    (
        sampled_variance(
            n,
            Pooled::fraction(s.live_objects, s.allocated_objects),
            samples,
        ),
        sampled_variance(
            b,
            Pooled::fraction(s.live_bytes, s.allocated_bytes),
            samples,
        ),
    )
}

/// Adjusts the sites' estimates (estimate, variance, allocated) of one class so they add up
/// to the class's `total`, counted exactly: the difference is spread over the sites in
/// proportion to their estimates' variances (the least squares adjustment), so a site
/// whose samples were all live or all dead takes little of it, and a site no sample saw
/// (infinite variance) takes what the others leave. No site goes below 0 or above what it
/// allocated. A class total above the estimates by more than the unseen sites can hold and
/// three standard deviations of the sampled estimates' sum is cut to that: the rest are
/// objects no site counted (the VM's own, made after counting began).
pub(super) fn reconcile(total: u64, sites: &[(u64, f64, u64)]) -> Vec<u64> {
    let n = sites.len();
    let cap: Vec<f64> = sites.iter().map(|s| s.2 as f64).collect();
    let mut x: Vec<f64> = sites.iter().map(|s| (s.0 as f64).min(s.2 as f64)).collect();
    let mut total = (total as f64).min(cap.iter().sum());
    let estimated: f64 = x.iter().sum();
    if total > estimated {
        // More live than the estimates say: the sites no sample saw may hold it, and the
        // sampled ones up to three standard deviations of their sum (sampling noise); the
        // rest was made by allocations no site counted (the VM's own objects, made after
        // counting began) and is left out rather than given to the largest, least certain
        // sites.
        let unseen: f64 = (0..n)
            .filter(|&i| sites[i].1.is_infinite())
            .map(|i| cap[i] - x[i])
            .sum();
        let spread: f64 = sites
            .iter()
            .map(|s| s.1)
            .filter(|v| v.is_finite())
            .sum::<f64>()
            .sqrt();
        total = total.min(estimated + unseen + 3.0 * spread);
    }
    let unseen = sites.iter().any(|s| s.1.is_infinite());
    for round in 0..2 * n + 2 {
        let diff = total - x.iter().sum::<f64>();
        if diff.abs() < 0.5 {
            break;
        }
        let room = |i: usize| {
            if diff > 0.0 {
                cap[i] - x[i] > 1e-9
            } else {
                x[i] > 1e-9
            }
        };
        // Weights: infinite variances first (sites no sample saw, by what they
        // allocated), then the variances, then (none left) the estimates or the room.
        let mut w: Vec<f64> = (0..n)
            .map(|i| match sites[i].1 {
                _ if !room(i) => 0.0,
                v if v.is_infinite() => cap[i],
                _ if unseen && (0..n).any(|j| sites[j].1.is_infinite() && room(j)) => 0.0,
                v => v,
            })
            .collect();
        if w.iter().sum::<f64>() <= 0.0 || round > n {
            w = (0..n)
                .map(|i| {
                    if !room(i) {
                        0.0
                    } else if diff > 0.0 {
                        cap[i] - x[i]
                    } else {
                        x[i]
                    }
                })
                .collect();
        }
        let sum: f64 = w.iter().sum();
        if sum <= 0.0 {
            break;
        }
        for i in 0..n {
            x[i] = (x[i] + diff * w[i] / sum).clamp(0.0, cap[i]);
        }
    }
    // Whole numbers adding up to the total.
    let whole = total.round() as u64;
    let floors: Vec<u64> = x.iter().map(|v| v.floor() as u64).collect();
    let mut out = floors.clone();
    let mut left = whole.saturating_sub(floors.iter().sum());
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        (x[b] - x[b].floor())
            .partial_cmp(&(x[a] - x[a].floor()))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for i in order {
        if left == 0 {
            break;
        }
        if out[i] < sites[i].2 {
            out[i] += 1;
            left -= 1;
        }
    }
    out
}

/// Shares `total` among `weights` in proportion, by largest remainders: the shares add up
/// to `total` exactly.
pub(super) fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 || weights.is_empty() {
        let mut out = vec![0; weights.len()];
        if let Some(first) = out.first_mut() {
            *first = total;
        }
        return out;
    }
    let mut shares: Vec<(u64, u128, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let p = u128::from(total) * u128::from(w);
            ((p / sum) as u64, p % sum, i)
        })
        .collect();
    let given: u64 = shares.iter().map(|s| s.0).sum();
    let mut left = total - given;
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| shares[b].1.cmp(&shares[a].1).then(a.cmp(&b)));
    for i in order {
        if left == 0 {
            break;
        }
        shares[i].0 += 1;
        left -= 1;
    }
    shares.into_iter().map(|s| s.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconciled_estimates_add_up_and_certain_ones_stay() {
        // All live (variance 0), none live (0), two uncertain: the difference goes to the
        // uncertain ones by variance, up to three standard deviations (300) above.
        let sites = [
            (1000, 0.0, 1000),
            (0, 0.0, 1000),
            (300, 9000.0, 1000),
            (500, 1000.0, 1000),
        ];
        assert_eq!(reconcile(1700, &sites), vec![1000, 0, 210, 490]);
        assert_eq!(reconcile(1900, &sites), vec![1000, 0, 390, 510]);
        assert_eq!(reconcile(2500, &sites), vec![1000, 0, 570, 530]);
        // A site no sample saw takes what the others leave, capped at what it allocated; the
        // sampled ones take up to three standard deviations (3 √5) more, the rest is left out.
        let sites = [(100, 4.0, 200), (0, f64::INFINITY, 50), (10, 1.0, 100)];
        let out = reconcile(250, &sites);
        assert_eq!(out.iter().sum::<u64>(), 167, "{out:?}");
        assert_eq!(out[1], 50);
        assert_eq!(reconcile(10_000, &sites), out);
        // Up to the unseen site's room, the whole class total is taken.
        let out = reconcile(150, &sites);
        assert_eq!(out, vec![100, 40, 10]);
        // Too many estimated: taken back from the uncertain ones.
        let out = reconcile(1000, &[(1000, 0.0, 1000), (200, 4.0, 1000)]);
        assert_eq!(out, vec![1000, 0]);
    }

    #[test]
    fn shares_add_up_to_the_exact_total() {
        assert_eq!(apportion(10, &[1, 1, 1]), vec![4, 3, 3]);
        assert_eq!(apportion(100_000, &[3, 1]), vec![75_000, 25_000]);
        assert_eq!(apportion(7, &[0, 0]), vec![7, 0]);
        assert_eq!(apportion(0, &[5, 2]), vec![0, 0]);
        let shares = apportion(1_000_003, &[17, 4, 9, 1, 1]);
        assert_eq!(shares.iter().sum::<u64>(), 1_000_003);
    }
}
