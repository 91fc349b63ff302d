"""The long screen clip: 30 s of a desktop at 1280x720@30 as YUV4MPEG2 (BT.601 limited range),
made once and cached (bench/.build/inputs/desktop.y4m). What a shared screen does, in turns:
still stretches (nothing changes at all), typing (a character every 100 ms and a blinking
caret: small changes), smooth scrolling (the page moves 4 px a frame), page jumps (300 px at
once) and a menu popping up. Real text (DejaVu Sans and Sans Mono, Debian's fonts-dejavu-core)
drawn with Pillow; deterministic.

Every frame carries the frame marker (DESIGN.md) in the top-left: row 1 the index of the frame,
row 2 zero. A frame that does not differ from the one before carries that frame's marker, so a
still stretch is made of identical frames, as a still screen is, and a receiver's frame still
names the first frame that looked like it.

    python3 desktop_clip.py OUT.y4m      (needs python3-pil and python3-numpy)"""
import random
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

W, H, FPS, SECONDS = 1280, 720, 30, 30
FONTS = "/usr/share/fonts/truetype/dejavu/"
MONO = ImageFont.truetype(FONTS + "DejaVuSansMono.ttf", 14)
SANS = ImageFont.truetype(FONTS + "DejaVuSans.ttf", 13)
LINE = 18  # editor line height, px
EDITOR = (250, 60, 1240, 680)  # the editor's text area: x0, y0, x1, y1
TYPED_AT = (3, 9), (23, 26)  # seconds of typing
SCROLL_AT = (12, 16)  # seconds of smooth scrolling
JUMPS_AT = (19, 23)  # seconds of page jumps, one a second
MENU_AT = 24.5  # a menu pops up and stays
WORDS = ("frame slot ring encoder packet budget keyframe rate pacer share marker receiver stride plane "
         "luma chroma width height bitrate target window queue deadline sender session event").split()


def document(rng, lines=220):
    """The editor's text, one string per line: indented statement-like lines."""
    out = []
    depth = 0
    for n in range(lines):
        if n % 11 == 0:
            depth = 0
            out.append(f"func {rng.choice(WORDS)}{rng.choice(WORDS).title()}({rng.choice(WORDS)}: Int) {{")
            depth = 1
            continue
        if n % 11 == 10:
            out.append("}")
            continue
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7)))
        op = rng.choice(["let {w} = {x}", "if {w} > {n} {{ return }}", "{w} += {n}  // {x}", "{w}.{x}()"])
        out.append("    " * depth + op.format(w=rng.choice(WORDS), x=words.replace(" ", "_", 1), n=rng.randint(1, 999)))
    return out


def page_image(lines):
    """The whole document rendered once: a tall RGB image the editor shows a window of."""
    width = EDITOR[2] - EDITOR[0]
    img = Image.new("RGB", (width, LINE * len(lines) + EDITOR[3]), (253, 253, 250))
    d = ImageDraw.Draw(img)
    for n, text in enumerate(lines):
        y = n * LINE + 2
        d.text((6, y), f"{n + 1:4d}", font=MONO, fill=(150, 150, 160))
        colour = (20, 60, 140) if text.startswith("func") else (30, 30, 30)
        d.text((52, y), text, font=MONO, fill=colour)
    return img


def desktop():
    """Everything outside the editor's text area: background, window frame, sidebar, status bar."""
    img = Image.new("RGB", (W, H), (58, 110, 165))
    d = ImageDraw.Draw(img)
    d.rectangle((30, 40, 1250, 700), fill=(236, 236, 236), outline=(90, 90, 90))
    d.rectangle((30, 40, 1250, 58), fill=(55, 60, 70))
    d.text((40, 42), "share.swift — rtcshare", font=SANS, fill=(240, 240, 240))
    d.rectangle((40, 60, 240, 680), fill=(244, 244, 246))
    for n, name in enumerate(sorted(set(WORDS))):
        d.text((52, 70 + n * 20), f"{name}.swift", font=SANS, fill=(40, 40, 60))
    d.rectangle((30, 684, 1250, 700), fill=(0, 102, 184))
    d.text((1150, 686), "Ln 15, Col 5   UTF-8", font=SANS, fill=(255, 255, 255))
    return img


def rgb_to_i420(rgb):
    """BT.601 limited range, chroma averaged over 2x2."""
    f = rgb.astype(np.float32)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    u = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
    v = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255

    def sub(p):
        return p.reshape(H // 2, 2, W // 2, 2).mean(axis=(1, 3))
    return [np.clip(np.rint(p), 0, 255).astype(np.uint8) for p in (y, sub(u), sub(v))]


def stamp(y, counter):
    """The frame marker: row 1 `counter`, MSB first, 8x16 blocks (Y 235 is 1, 16 is 0); row 2 zero."""
    for bit in range(32):
        on = (counter >> (31 - bit)) & 1
        y[0:16, bit * 8:bit * 8 + 8] = 235 if on else 16
    y[16:32, 0:256] = 16


def within(t, span):
    return span[0] <= t < span[1]


def main():
    rng = random.Random(25)
    lines = document(rng)
    page = page_image(lines)
    base = desktop()
    typed_text = "let refined = encoder.search(loopFilter: true)  // typed while sharing"
    ex = EDITOR
    view_h = ex[3] - ex[1]
    scroll = 0
    typed = 0
    last_rgb, last_marker = None, 0
    with open(sys.argv[1], "wb") as out:
        out.write(f"YUV4MPEG2 W{W} H{H} F{FPS}:1 Ip A1:1 C420jpeg\n".encode())
        for i in range(FPS * SECONDS):
            t = i / FPS
            typing = any(within(t, s) for s in TYPED_AT)
            if typing and i % 3 == 0:
                typed += 1
            if within(t, SCROLL_AT):
                scroll += 4
            if within(t, JUMPS_AT) and (i % FPS) == 0:
                scroll += 300
            frame = base.copy()
            frame.paste(page.crop((0, scroll, ex[2] - ex[0], scroll + view_h)), (ex[0], ex[1]))
            d = ImageDraw.Draw(frame)
            # The line being typed: after the 14th line on screen; the caret blinks while typing.
            ty = ex[1] + 14 * LINE + 2
            d.rectangle((ex[0], ty - 2, ex[2], ty + LINE - 2), fill=(255, 250, 215))
            text = typed_text[:typed % (len(typed_text) + 1)]
            d.text((ex[0] + 52, ty), "    " + text, font=MONO, fill=(30, 30, 30))
            if typing and (i // 15) % 2 == 0:
                cx = ex[0] + 52 + int(d.textlength("    " + text, font=MONO))
                d.rectangle((cx, ty, cx + 1, ty + 15), fill=(0, 0, 0))
            if t >= MENU_AT:
                d.rectangle((700, 200, 960, 420), fill=(250, 250, 250), outline=(120, 120, 120))
                for n, item in enumerate(("Cut", "Copy", "Paste", "Find…", "Replace…", "Go to line…",
                                          "Format", "Comment", "Fold", "Share screen")):
                    d.text((716, 208 + n * 21), item, font=SANS, fill=(20, 20, 20))
            rgb = np.asarray(frame)
            if last_rgb is None or not np.array_equal(rgb, last_rgb):
                last_marker = i
            last_rgb = rgb
            planes = rgb_to_i420(rgb)
            stamp(planes[0], last_marker)
            out.write(b"FRAME\n")
            for p in planes:
                out.write(p.tobytes())


if __name__ == "__main__":
    main()
