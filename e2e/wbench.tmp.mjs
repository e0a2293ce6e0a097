import { launch, editorText, setEditor, ensureEditor, gotoReady, reloadReady } from './browser.mjs';
const base = process.argv[2];
const browser = await launch();
const page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
await gotoReady(page, base);
await page.evaluate(() => localStorage.clear());
await reloadReady(page);
await page.waitForSelector('[data-testid="watch-cache"]');
await ensureEditor(page);
const onlyEsr = (src) => src.split('\n').filter((l) => !l.startsWith('expect') || l.trim() === 'expect esr').join('\n') + '\nexpect esr\n';
const rates = [];
for (const file of ['17-level-triggered', '09-work-queue-dedup', '20-explore-stale-delete-fixed', '10-error-backoff', '03-too-old']) {
  const [value, full] = await page.$eval('[data-testid="gallery"]', (s, f) => { const o = [...s.options].find((o) => (o.dataset.file || '').includes(f)); return [o.value, o.dataset.file]; }, file);
  await page.selectOption('[data-testid="gallery"]', value);
  await page.waitForSelector(`[data-testid="gallery"][data-loaded="${full}"]`);
  await setEditor(page, onlyEsr(await editorText(page)));
  await page.fill('input[aria-label="Schedules to try at most"]', '3000');
  await page.click('[data-testid="explore"]');
  await page.waitForSelector('[data-testid="explore-found"], [data-testid="explore-none"], .explore .fail', { timeout: 120000 });
  const stats = await page.textContent('[data-testid="explore-stats"]');
  const m = /([\d.]+) of [\d.]+ schedules.* ([\d.]+) schedules\/s/.exec(stats);
  rates.push(parseFloat(m[2]));
}
const s = [...rates].sort((a, b) => a - b);
console.log('median', s[2], 'all', rates.join(' '));
await browser.close();
