import { launch, gotoReady } from './browser.mjs';
const b = await launch();
const p = await (await b.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
await gotoReady(p, process.argv[2]);
await p.evaluate(() => localStorage.clear());
await p.reload(); await p.waitForSelector('[data-testid="watch-cache"]');
await p.waitForTimeout(500);
await p.screenshot({ path: process.argv[3] });
await b.close();
