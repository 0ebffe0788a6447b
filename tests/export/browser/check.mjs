#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0-only
//
// Check an exported profile file with a real reader in a real browser
// (Debian's headless Chromium, driven by playwright-core).
//
//   node check.mjs speedscope FILE [--screenshot PNG] [--allow-warnings]
//   node check.mjs html FILE --screenshot PNG
//   (either takes --timeout SECONDS, default 60: past it the check fails)
//
// speedscope: FILE is opened in speedscope's own app, as a user who opened
// FILE there would see it; the importer speedscope picked, its profiles and
// their frames and calls (from speedscope's own Export) are printed.
// html: FILE, a self-contained page, must render: not blank, every <svg>
// sized and drawn, no uncaught exception, nothing loaded from outside.
//
// Prints one fact per line on stdout.  Exit 0: the reader accepted FILE.
// Exit 1: it did not (one sentence on stderr says why).  Exit 2: the readers
// are not installed (tests/export/browser/install.sh installs them).  A
// missing reader is a failure, never a skip.
//
// Readers are found in $TAILOR_READERS (default
// /usr/local/lib/tailor-test-readers), the browser at $TAILOR_CHROMIUM
// (default /usr/bin/chromium).

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const READERS = process.env.TAILOR_READERS || '/usr/local/lib/tailor-test-readers';
const CHROMIUM = process.env.TAILOR_CHROMIUM || '/usr/bin/chromium';
const VIEWPORT = { width: 1280, height: 800 };

// Chromium flags that work as root on a machine with no network: without the
// background-networking/component-update/sync flags Chromium keeps trying to
// reach Google and gets refused.  With --disable-gpu, WebGL (which
// speedscope draws its flame graph with) runs on SwiftShader, Chromium's
// software renderer; Chromium is phasing out falling back to it silently, and
// --enable-unsafe-swiftshader keeps it available (the "unsafe" is about
// untrusted web content, and we only load local files).
const CHROMIUM_FLAGS = [
	'--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	'--disable-background-networking', '--disable-component-update',
	'--disable-sync', '--enable-unsafe-swiftshader',
];

const USAGE = 'usage: check.mjs speedscope FILE [--screenshot PNG] [--allow-warnings] [--timeout SECONDS]\n' +
	'       check.mjs html FILE --screenshot PNG [--timeout SECONDS]';

// ---------------------------------------------------------------- plumbing

let phase = 'starting';          // what we were doing, for the timeout message
let context = null;              // playwright BrowserContext
let scratch = null;              // Chromium's profile and temp files, removed on exit
let server = null;               // throwaway HTTP server (speedscope only)
let failShot = null;             // best-effort screenshot of a failed check

function fact(key, value) {
	console.log(`${key}: ${value}`);
}

async function cleanup() {
	const ctx = context;
	context = null;
	if (ctx) {
		// Closing normally takes ~100 ms; never let a wedged browser
		// keep us from exiting (playwright kills it on process exit).
		await Promise.race([ctx.close().catch(() => {}),
			new Promise(r => setTimeout(r, 5000))]);
	}
	if (server) {
		server.closeAllConnections?.();
		server.close();
		server = null;
	}
	if (scratch) {
		fs.rmSync(scratch, { recursive: true, force: true });
		scratch = null;
	}
}

// Print one sentence and exit with CODE (1: check failed, 2: not installed).
// Only the first failure speaks: e.g. after a timeout, the check still in
// flight fails too once the browser goes away, and must stay quiet.
let failing = false;
async function fail(code, sentence) {
	if (failing)
		return new Promise(() => {});
	failing = true;
	console.error(`check.mjs: ${sentence}`);
	const shot = failShot;
	failShot = null;
	if (shot)
		await Promise.race([shot().catch(() => {}),
			new Promise(r => setTimeout(r, 3000))]);
	await cleanup();
	process.exit(code);
}

function parseArgs(argv) {
	const opts = { cmd: argv[0], file: null, screenshot: null,
		allowWarnings: false, timeout: 60 };
	for (let i = 1; i < argv.length; i++) {
		const a = argv[i];
		if (a === '--screenshot' && i + 1 < argv.length)
			opts.screenshot = path.resolve(argv[++i]);
		else if (a === '--timeout' && i + 1 < argv.length)
			opts.timeout = Number(argv[++i]);
		else if (a === '--allow-warnings')
			opts.allowWarnings = true;
		else if (!a.startsWith('--') && opts.file === null)
			opts.file = path.resolve(a);
		else
			return null;
	}
	if (!['speedscope', 'html'].includes(opts.cmd) || opts.file === null ||
	    !(opts.timeout > 0) || (opts.cmd === 'html' && !opts.screenshot))
		return null;
	return opts;
}

// Load playwright-core from the readers directory, or exit 2.
async function loadReaders() {
	const how = `run tests/export/browser/install.sh as root`;
	for (const p of ['node_modules/playwright-core/package.json',
			 'node_modules/speedscope/package.json']) {
		if (!fs.existsSync(path.join(READERS, p)))
			await fail(2, `the test readers are not installed in ${READERS} (${p} is missing): ${how}.`);
	}
	// install.sh records the hash of the lock file it installed; a
	// different lock file beside this script means the pinned versions
	// changed since, and results would come from the wrong readers.
	const lock = path.join(HERE, 'package-lock.json');
	const stamp = path.join(READERS, '.tailor-lock.sha256');
	if (fs.existsSync(lock)) {
		const want = crypto.createHash('sha256').update(fs.readFileSync(lock)).digest('hex');
		const have = fs.existsSync(stamp) ? fs.readFileSync(stamp, 'utf8').trim() : '(none)';
		if (want !== have)
			await fail(2, `the test readers in ${READERS} were not installed from ${lock}: ${how}.`);
	}
	if (!fs.existsSync(CHROMIUM))
		await fail(2, `Chromium is not installed at ${CHROMIUM}: ${how}.`);
	const require = createRequire(path.join(READERS, 'package.json'));
	return require('playwright-core');
}

async function launch(playwright) {
	phase = 'starting Chromium';
	// A fresh, empty profile, and a TMPDIR of its own: Chromium keeps its
	// singleton socket (and, with a small /dev/shm, shared memory) in
	// TMPDIR, and leaves them behind when it is killed, e.g. on timeout.
	scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tailor-chromium-'));
	const profile = path.join(scratch, 'profile');
	const tmp = path.join(scratch, 'tmp');
	fs.mkdirSync(profile);
	fs.mkdirSync(tmp);
	context = await playwright.chromium.launchPersistentContext(profile, {
		env: { ...process.env, TMPDIR: tmp },
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_FLAGS,
		viewport: VIEWPORT,
		colorScheme: 'light',   // speedscope follows the system theme
		acceptDownloads: true,  // speedscope's Export is a download
		timeout: 30000,
	});
	return context.pages()[0] ?? await context.newPage();
}

// Decode PNG bytes in the browser (no PNG library needed) and measure them.
// "background" is the most common colour; "coloured" pixels are those whose
// channels differ by more than 24 (i.e. not white, grey or black).
async function pixelStats(png) {
	const page = await context.newPage();
	try {
		return await page.evaluate(async (b64) => {
			const img = new Image();
			img.src = `data:image/png;base64,${b64}`;
			await img.decode();
			const c = document.createElement('canvas');
			c.width = img.naturalWidth;
			c.height = img.naturalHeight;
			const g = c.getContext('2d', { willReadFrequently: true });
			g.drawImage(img, 0, 0);
			const d = g.getImageData(0, 0, c.width, c.height).data;
			const counts = new Map();
			let nonWhite = 0, coloured = 0;
			for (let i = 0; i < d.length; i += 4) {
				const r = d[i], gr = d[i + 1], b = d[i + 2];
				const key = (r << 16) | (gr << 8) | b;
				counts.set(key, (counts.get(key) || 0) + 1);
				if (r < 250 || gr < 250 || b < 250)
					nonWhite++;
				if (Math.max(r, gr, b) - Math.min(r, gr, b) > 24)
					coloured++;
			}
			const total = c.width * c.height;
			const dominant = Math.max(...counts.values());
			return { width: c.width, height: c.height,
				colours: counts.size,
				nonWhite: nonWhite / total,
				nonBackground: (total - dominant) / total,
				nonBackgroundPixels: total - dominant,
				coloured: coloured / total };
		}, png.toString('base64'));
	} finally {
		await page.close();
	}
}

const pct = x => `${(100 * x).toFixed(2)}%`;

// -------------------------------------------------------------- speedscope

const MIME = { '.html': 'text/html', '.js': 'text/javascript',
	'.css': 'text/css', '.json': 'application/json', '.png': 'image/png',
	'.ico': 'image/x-icon', '.woff2': 'font/woff2',
	'.wasm': 'application/wasm' };

// Serve speedscope's built app at / and FILE at /profile/<its basename>.
// The basename matters: speedscope picks some importers by file name
// (*.speedscope.json, *.chrome.json, callgrind.*, ...), so the check sees
// what a user who opened FILE would see.
async function serve(appDir, file) {
	const profilePath = `/profile/${encodeURIComponent(path.basename(file))}`;
	server = http.createServer((req, res) => {
		const notFound = () => {
			res.writeHead(404, { 'Content-Type': 'text/plain' });
			res.end('not found');
		};
		const url = new URL(req.url, 'http://127.0.0.1');
		let target = file;
		if (url.pathname !== profilePath) {
			const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
			target = path.join(appDir, path.normalize(rel));
			if (!target.startsWith(appDir + path.sep))
				return notFound();
		}
		fs.readFile(target, (err, data) => {
			if (err)
				return notFound();
			const type = target === file ? 'application/octet-stream'
				: MIME[path.extname(target)] ?? 'application/octet-stream';
			res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-store' });
			res.end(data);
		});
	});
	await new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', resolve);
	});
	const base = `http://127.0.0.1:${server.address().port}`;
	return `${base}/#profileURL=${encodeURIComponent(base + profilePath)}`;
}

function findSpeedscopeApp() {
	const pkg = path.join(READERS, 'node_modules/speedscope');
	for (const dir of ['dist/release', 'dist', 'release']) {
		if (fs.existsSync(path.join(pkg, dir, 'index.html')))
			return { dir: path.join(pkg, dir),
				version: JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'))).version };
	}
	return null;
}

async function checkSpeedscope(playwright, opts) {
	const file = opts.file;
	const app = findSpeedscopeApp();
	if (!app)
		await fail(2, `speedscope in ${READERS} has no built index.html: run tests/export/browser/install.sh as root.`);
	fact('file', file);
	fact('reader', `speedscope ${app.version}`);
	const url = await serve(app.dir, file);
	const page = await launch(playwright);
	if (opts.screenshot)
		failShot = () => page.screenshot({ path: opts.screenshot });

	// How speedscope 1.x reports the outcome of an import (see
	// Application.loadProfile in its source):
	//   console.log("Importing as <importer>")  an importer claimed the file
	//   console.timeEnd("import")               import finished, profile set
	//   alert("Unrecognized format! ...")       no importer claimed it
	//   alert("Successfully imported ... empty") importer found nothing
	//   console.log("Failed to load format", e) importer threw; error page
	// Importers also console.warn() about input they had to repair (e.g.
	// "Tried to end X when Y was on the top of the stack"); those are
	// failures unless --allow-warnings, since a well-formed export needs
	// no repair.
	const st = { importer: null, done: false, error: null, warnings: [] };
	let settle;
	const settled = new Promise(r => { settle = r; });
	page.on('console', msg => {
		const text = msg.text();
		const m = /^Importing as (.*)$/.exec(text);
		if (m && st.importer === null) {
			st.importer = m[1];
		} else if (/^import: [\d.]+ ?ms$/.test(text) && st.importer !== null) {
			st.done = true;
			settle();
		} else if (text.startsWith('Failed to load format')) {
			// The error's message, without its stack.
			st.error = 'its importer threw ' +
				text.slice('Failed to load format'.length).trim().split('\n')[0];
			settle();
		} else if (text.startsWith('Failed to create WebGL context')) {
			st.error = `WebGL is not available in Chromium (${text})`;
			settle();
		} else if (msg.type() === 'warning' && st.importer !== null && !st.done &&
			   !text.startsWith('[.WebGL-')) {
			st.warnings.push(text);
		}
	});
	page.on('dialog', dialog => {
		st.error = dialog.message();
		dialog.dismiss().catch(() => {});
		settle();
	});
	page.on('pageerror', err => {
		st.error = `uncaught exception: ${err.message}`;
		settle();
	});

	phase = 'loading speedscope';
	await page.goto(url, { waitUntil: 'load' });
	phase = 'waiting for speedscope to import the profile';
	await settled;
	if (st.importer !== null)
		fact('importer', st.importer);
	for (const w of st.warnings)
		fact('warning', w);
	if (!st.done || st.error)
		await fail(1, `speedscope could not import ${file}: ${(st.error ?? 'it never finished importing').replace(/\.+$/, '')}.`);

	// Let the flame graph draw (a few frames after the profile is set).
	phase = 'waiting for speedscope to draw the profile';
	await page.waitForFunction(() => document.body.innerText.includes('Export') &&
		document.querySelector('canvas')?.getBoundingClientRect().height > 0);
	await page.evaluate(() => new Promise(r =>
		requestAnimationFrame(() => requestAnimationFrame(r))));
	const body = await page.evaluate(() => document.body.innerText);
	if (body.includes('Drag and drop a profile file'))
		await fail(1, `speedscope still shows its landing page after importing ${file}.`);
	if (body.includes('Something went wrong'))
		await fail(1, `speedscope shows its error page after importing ${file}.`);
	fact('title', await page.title());

	phase = 'taking a screenshot';
	// Below the 20 px toolbar the window holds only the flame graph (and
	// its minimap).  Every non-empty profile has a full-width root row in
	// both, about 2 x 20 px of 780 px = 5% of that area in colour;
	// grid lines, rulers and labels are grey.  1% is a safe floor.
	const graph = { x: 0, y: 24, width: VIEWPORT.width, height: VIEWPORT.height - 24 };
	const graphStats = await pixelStats(await page.screenshot({ clip: graph }));
	if (opts.screenshot)
		await page.screenshot({ path: opts.screenshot });
	fact('graph coloured pixels', pct(graphStats.coloured));
	if (opts.screenshot)
		fact('screenshot', opts.screenshot);

	// What speedscope understood: its own Export (a speedscope JSON file,
	// every profile as open/close events of the frames it called).
	phase = 'exporting the profile from speedscope';
	const [download] = await Promise.all([
		page.waitForEvent('download'),
		page.evaluate(() => {
			const tab = [...document.querySelectorAll('div')]
				.find(d => d.children.length === 1 && /Export$/.test(d.textContent));
			if (!tab)
				throw new Error('no Export button');
			tab.click();
		}),
	]);
	const exported = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
	const profiles = exported.profiles ?? [];
	fact('profiles', profiles.length);
	fact('frames', exported.shared?.frames?.length ?? 0);
	let calls = 0;
	profiles.forEach((p, i) => {
		const opens = (p.events ?? []).filter(e => e.type === 'O').length;
		calls += opens;
		fact(`profile ${i + 1}`, `${JSON.stringify(p.name)} calls=${opens} ` +
			`weight=${p.endValue - p.startValue} ${p.unit}`);
	});
	fact('shown', `profile ${(exported.activeProfileIndex ?? 0) + 1} of ${profiles.length}`);

	if (calls === 0 || (exported.shared?.frames?.length ?? 0) === 0)
		await fail(1, `speedscope imported ${file} but found no calls in it.`);
	if (graphStats.coloured < 0.01)
		await fail(1, `speedscope imported ${file} but drew no flame graph (${pct(graphStats.coloured)} coloured pixels).`);
	if (st.warnings.length && !opts.allowWarnings)
		await fail(1, `speedscope had to repair ${file} while importing it: ${st.warnings[0]}`);
}

// -------------------------------------------------------------------- html

// Thresholds for "the page is not blank", on the full-page screenshot.  A
// blank page is one colour with 0 pixels off its background (the most
// common colour, so a dark theme counts too).  A lone line of body text is
// ~1,100 pixels off it and a small 320x160 SVG bar chart with a heading
// ~15,000; anti-aliased text or shapes bring dozens of colours at once.  So
// ask for 8 colours and 5,000 pixels (some four lines of text or a 70x70
// filled shape): a page showing only an error line fails, any real report
// passes.  Absolute pixels rather than a fraction, so that a long page with
// much white space is not judged blank.
const MIN_COLOURS = 8;
const MIN_NON_BACKGROUND_PIXELS = 5000;

async function checkHtml(playwright, opts) {
	const file = opts.file;
	fact('file', file);
	const page = await launch(playwright);
	failShot = () => page.screenshot({ path: opts.screenshot, fullPage: true });
	const errors = [];
	const external = [];
	page.on('pageerror', err => errors.push(err.message));
	// A self-contained page loads nothing from outside; refuse (and
	// report) any attempt instead of waiting on the closed network.
	await context.route(u => !/^(file|data|blob|about):$/.test(u.protocol), route => {
		external.push(route.request().url());
		route.abort().catch(() => {});
	});

	phase = 'loading the page';
	await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
	// Give scripts that draw on load their frames, and fonts their load.
	await page.evaluate(async () => {
		await document.fonts.ready;
		await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
	});

	phase = 'inspecting the page';
	const info = await page.evaluate(() => ({
		title: document.title,
		svgs: [...document.querySelectorAll('svg')].map(svg => {
			const r = svg.getBoundingClientRect();
			return { width: r.width, height: r.height,
				shapes: svg.querySelectorAll('rect, circle, ellipse, line, polyline, polygon, path').length };
		}),
	}));
	fact('title', JSON.stringify(info.title));
	fact('svgs', info.svgs.length);
	info.svgs.forEach((s, i) =>
		fact(`svg ${i + 1}`, `${Math.round(s.width)}x${Math.round(s.height)} shapes=${s.shapes}`));

	phase = 'taking a screenshot';
	const png = await page.screenshot({ path: opts.screenshot, fullPage: true });
	const px = await pixelStats(png);
	fact('screenshot', `${opts.screenshot} ${px.width}x${px.height}`);
	fact('colours', px.colours);
	fact('non-white pixels', pct(px.nonWhite));
	fact('non-background pixels', `${px.nonBackgroundPixels} (${pct(px.nonBackground)})`);

	if (errors.length)
		await fail(1, `${file} threw an uncaught exception: ${errors[0]}`);
	if (external.length)
		await fail(1, `${file} is not self-contained: it requested ${external[0]}.`);
	if (px.colours < MIN_COLOURS || px.nonBackgroundPixels < MIN_NON_BACKGROUND_PIXELS)
		await fail(1, `${file} rendered blank (${px.colours} colours, ` +
			`${px.nonBackgroundPixels} pixels off the background; ` +
			`at least ${MIN_COLOURS} and ${MIN_NON_BACKGROUND_PIXELS} wanted).`);
	const bad = info.svgs.findIndex(s => !(s.width > 0 && s.height > 0 && s.shapes > 0));
	if (bad >= 0) {
		const s = info.svgs[bad];
		await fail(1, `svg ${bad + 1} in ${file} is ${s.shapes ? 'not rendered' : 'empty'} ` +
			`(${Math.round(s.width)}x${Math.round(s.height)}, ${s.shapes} shapes).`);
	}
}

// -------------------------------------------------------------------- main

async function main() {
	const opts = parseArgs(process.argv.slice(2));
	if (!opts) {
		console.error(USAGE);
		process.exit(1);
	}
	const started = Date.now();
	const timer = setTimeout(() => {
		fail(1, `${opts.cmd} check of ${opts.file} timed out after ${opts.timeout} s while ${phase}.`);
	}, opts.timeout * 1000);
	for (const sig of ['SIGINT', 'SIGTERM'])
		process.on(sig, () => fail(1, `interrupted by ${sig} while ${phase}.`));

	if (!fs.statSync(opts.file, { throwIfNoEntry: false })?.isFile())
		await fail(1, `${opts.file} is not a readable file.`);
	const playwright = await loadReaders();
	try {
		if (opts.cmd === 'speedscope')
			await checkSpeedscope(playwright, opts);
		else
			await checkHtml(playwright, opts);
	} catch (err) {
		await fail(1, `${opts.cmd} check of ${opts.file} failed while ${phase}: ${err.message.split('\n')[0]}`);
	}
	fact('time', `${((Date.now() - started) / 1000).toFixed(1)} s`);
	clearTimeout(timer);
	await cleanup();
	process.exit(0);
}

main();
