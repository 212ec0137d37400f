import { chartGeometry, SERIES_KEYS, SERIES_LABELS, type Sample, type SeriesKey } from '../state/series';
import { elapsedLabel } from '../state/series';

const W = 640;
const H = 260;
const BOX = { width: W, height: H, left: 52, right: 16, top: 14, bottom: 44 };

export const SERIES_STYLE: Record<SeriesKey, { color: string; dash?: string }> = {
  calls: { color: '#1d4ed8' },
  successes: { color: '#15803d', dash: '8 4' },
  failures: { color: '#b91c1c', dash: '2 3' },
  noAnswers: { color: '#8a5a00', dash: '10 3 2 3' },
};

/** Calls, successes, failures and no answers over the samples this page took. */
export function StatsChart({ samples }: { samples: Sample[] }) {
  const g = chartGeometry(samples, BOX);
  const bottom = H - BOX.bottom;
  return (
    <figure class="chart-figure">
      <svg class="chart" data-testid="stats-chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title chart-desc">
        <title id="chart-title">Outcomes over time</title>
        <desc id="chart-desc">
          {samples.length
            ? `${samples.length} samples over ${elapsedLabel(g.t1 - g.t0)}; the table below gives the figures.`
            : 'No samples yet.'}
        </desc>
        {g.yTicks.map((t) => (
          <g key={t.value}>
            <line x1={BOX.left} x2={W - BOX.right} y1={t.y} y2={t.y} stroke="#e3e6ea" />
            <text x={BOX.left - 6} y={t.y + 4} text-anchor="end">
              {t.value}
            </text>
          </g>
        ))}
        <line x1={BOX.left} x2={BOX.left} y1={BOX.top} y2={bottom} stroke="#4a5360" />
        <line x1={BOX.left} x2={W - BOX.right} y1={bottom} y2={bottom} stroke="#4a5360" />
        {g.xTicks.map((t) => (
          <text key={t.label + t.x} x={t.x} y={bottom + 16} text-anchor="middle">
            {t.label}
          </text>
        ))}
        <text x={(BOX.left + W - BOX.right) / 2} y={H - 6} text-anchor="middle">
          Time since this page opened
        </text>
        <text x={14} y={(BOX.top + bottom) / 2} text-anchor="middle" transform={`rotate(-90 14 ${(BOX.top + bottom) / 2})`}>
          Count
        </text>
        {g.lines.map((l) =>
          samples.length > 1 ? (
            <polyline key={l.key} points={l.points} fill="none" stroke={SERIES_STYLE[l.key].color} stroke-width={2} stroke-dasharray={SERIES_STYLE[l.key].dash} />
          ) : samples.length === 1 ? (
            <circle key={l.key} cx={l.points.split(',')[0]} cy={l.points.split(',')[1]} r={3} fill={SERIES_STYLE[l.key].color} />
          ) : null,
        )}
      </svg>
      <ul class="legend" aria-hidden="true">
        {SERIES_KEYS.map((k) => (
          <li key={k}>
            <span style={{ background: SERIES_STYLE[k].color }} />
            {SERIES_LABELS[k]}
          </li>
        ))}
      </ul>
      <div class="visually-hidden">
      <table>
        <caption>Outcomes over time (samples taken by this page)</caption>
        <thead>
          <tr>
            <th scope="col">Time since this page opened</th>
            {SERIES_KEYS.map((k) => (
              <th scope="col" key={k}>
                {SERIES_LABELS[k]}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {samples.map((s) => (
            <tr key={s.t}>
              <th scope="row">{elapsedLabel(s.t - g.t0)}</th>
              {SERIES_KEYS.map((k) => (
                <td key={k}>{s[k]}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
    </figure>
  );
}
