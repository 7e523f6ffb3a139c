//! The Prometheus exposition of the metrics (`/metrics`): one snapshot of
//! the rows, written as counter and gauge families.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use super::{Arm, Counters, Outcome, Revision, RowKey};

/// Server-wide figures read at scrape time.
#[derive(Debug, Default)]
pub struct Extra {
    /// (arm, revision, counter name, value): policy counters (traps, timeouts…).
    pub policy_counters: Vec<(Arm, Revision, &'static str, u64)>,
    /// (result, count): swap attempts by result.
    pub swaps: Vec<(&'static str, u64)>,
    /// Tool calls in flight.
    pub in_flight: u64,
    /// (arm, revision, source): the policy each arm serves, and where it
    /// came from (a file, `embedded`, or an OCI artifact by digest).
    pub serving: Vec<(Arm, Revision, String)>,
}

#[derive(Debug)]
pub(super) struct Snapshot {
    pub(super) rows: Vec<(RowKey, Counters)>,
    pub(super) extra: Extra,
}

pub(super) type Labels = Vec<(&'static str, String)>;

pub(super) fn row_labels(k: &RowKey) -> Labels {
    vec![
        ("arm", k.arm.as_str().to_owned()),
        ("policy", k.revision.policy.to_string()),
        ("revision", k.revision.sha.to_string()),
        ("tool", k.tool.to_string()),
        ("state_tag", k.tag.to_string()),
    ]
}

pub(super) fn counter_family(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    samples: impl IntoIterator<Item = (Labels, u64)>,
) -> std::fmt::Result {
    let mut family = encoder.encode_descriptor(name, help, None, prometheus_client::metrics::MetricType::Counter)?;
    for (labels, v) in samples {
        ConstCounter::new(v).encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

impl Collector for Snapshot {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> std::fmt::Result {
        let rows = &self.rows;
        let with = |extra: (&'static str, &str), k: &RowKey| {
            let mut l = row_labels(k);
            l.push((extra.0, extra.1.to_owned()));
            l
        };
        counter_family(
            &mut encoder,
            "tool_calls",
            "Tool calls by the response's policy, tool, state tag and outcome",
            rows.iter().flat_map(|(k, c)| {
                Outcome::ALL
                    .iter()
                    .filter(|o| c.outcomes[o.index()] > 0)
                    .map(|o| (with(("outcome", o.as_str()), k), c.outcomes[o.index()]))
            }),
        )?;
        type Read = fn(&Counters) -> u64;
        let simple: [(&str, &str, Read); 9] = [
            ("hinted_responses", "Responses that offered at least one actionable hint", |c| c.hinted),
            ("hints_offered", "Actionable hints offered", |c| c.hints),
            ("dead_ends", "Responses with neither results nor an actionable hint", |c| c.dead_ends),
            ("repeated_calls", "Calls equal to one of the session's recent calls", |c| c.repeats),
            ("policy_faulted_calls", "Calls in which a policy function trapped, timed out or misbehaved", |c| {
                c.faulted
            }),
            ("text_bytes", "Bytes of text projection sent to agents", |c| c.text_bytes),
            ("hint_bytes", "Bytes of `hints` JSON sent to agents", |c| c.hint_bytes),
            ("calls_after_hints", "Calls that came right after a hinted response of this row", |c| c.next_calls),
            ("followed_hint_ok", "Calls that took a hint of this row and had results", |c| c.followed_ok),
        ];
        for (name, help, get) in simple {
            counter_family(&mut encoder, name, help, rows.iter().map(|(k, c)| (row_labels(k), get(c))))?;
        }
        counter_family(
            &mut encoder,
            "hints_followed",
            "Calls right after a hinted response of this row, by how they took its hints (exact, adapted, none)",
            rows.iter().flat_map(|(k, c)| {
                [("exact", c.followed), ("adapted", c.adapted), ("none", c.next_calls - c.followed - c.adapted)]
                    .into_iter()
                    .map(|(how, n)| (with(("follow", how), k), n))
            }),
        )?;
        let mut names: Vec<&'static str> = self.extra.policy_counters.iter().map(|p| p.2).collect();
        names.dedup();
        for name in names {
            counter_family(
                &mut encoder,
                &format!("policy_{name}"),
                &format!("Policy {} of the serving revision since it was loaded", name.replace('_', " ")),
                self.extra.policy_counters.iter().filter(|p| p.2 == name).map(|(arm, rev, _, v)| {
                    (
                        vec![
                            ("arm", arm.as_str().to_owned()),
                            ("policy", rev.policy.to_string()),
                            ("revision", rev.sha.to_string()),
                        ],
                        *v,
                    )
                }),
            )?;
        }
        counter_family(
            &mut encoder,
            "policy_swaps",
            "Policy swap attempts by result",
            self.extra.swaps.iter().map(|(result, n)| (vec![("result", (*result).to_owned())], *n)),
        )?;
        let mut family = encoder.encode_descriptor(
            "policy_serving",
            "The policy each arm serves (always 1): its revision, where it came from, and for an OCI artifact its \
             manifest digest, the same on every replica that serves the same build",
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        for (arm, rev, source) in &self.extra.serving {
            let labels: Labels = vec![
                ("arm", arm.as_str().to_owned()),
                ("policy", rev.policy.to_string()),
                ("revision", rev.sha.to_string()),
                ("digest", crate::oci::digest_in(source).unwrap_or("").to_owned()),
                ("source", source.clone()),
            ];
            ConstGauge::new(1i64).encode(family.encode_family(&labels)?)?;
        }
        let gauge = ConstGauge::new(self.extra.in_flight as i64);
        gauge.encode(encoder.encode_descriptor("in_flight", "Tool calls running now", None, gauge.metric_type())?)?;
        Ok(())
    }
}
