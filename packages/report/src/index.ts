export { renderReport } from './render-report.js';
export type { RenderReportOptions } from './render-report.js';
export { renderBarChart } from './svg-bar-chart.js';
export type { BarChartSpec, BarSeries } from './svg-bar-chart.js';
export type {
  FrontierEntry,
  GrowthRound,
  InjectRunSummary,
  PeriodUnit,
  ReportInput,
  RoundArm,
  SolverRunSummary,
  SpreadFigures,
  StrategyYield,
} from './report-input.js';
