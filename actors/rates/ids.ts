// systemIds of the rates service's long-lived actors (docs/DESIGN.md rule 5: addressed by id at send time).

export const RATES_HISTORY_ID = 'rates.history';
export const RATES_NOTIFIER_ID = 'rates.notifier';
export const RATES_REFRESH_ID = 'rates.refresh';
export const RATES_HTTP_ID = 'rates.http';
