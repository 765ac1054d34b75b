// Downloads of the current figure: SVG as drawn, PNG (the SVG drawn onto a canvas at 2x) and
// the weights as JSON, each through a Blob and an object URL.

const PNG_SCALE = 2;

/** A name safe for a file: attention-<run>.<ext>. */
export function fileName(run, ext) {
  const safe = String(run || "figure").replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");
  return `attention-${safe || "figure"}.${ext}`;
}

function save(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function svgBlob(svg) {
  const source = new XMLSerializer().serializeToString(svg);
  return new Blob([`<?xml version="1.0" encoding="UTF-8"?>\n${source}`],
    { type: "image/svg+xml" });
}

function pngBlob(svg) {
  const width = Number(svg.getAttribute("width"));
  const height = Number(svg.getAttribute("height"));
  const url = URL.createObjectURL(svgBlob(svg));
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.ceil(width * PNG_SCALE);
      canvas.height = Math.ceil(height * PNG_SCALE);
      const context = canvas.getContext("2d");
      context.scale(PNG_SCALE, PNG_SCALE);
      context.drawImage(image, 0, 0, width, height);
      URL.revokeObjectURL(url);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("no PNG"))), "image/png");
    };
    image.onerror = () => {
      URL.revokeObjectURL(url);
      reject(new Error("The figure could not be drawn as PNG."));
    };
    image.src = url;
  });
}

/**
 * Wire a download bar (a container holding buttons with data-format="svg" | "png" | "json") to
 * current(): null while there is no figure, else { run, svg() -> SVGElement, data() -> object }.
 * report(message) is called when a PNG cannot be made.
 */
export function downloadBar(bar, current, report) {
  const update = () => {
    const figure = current();
    bar.querySelectorAll("button").forEach((button) => { button.disabled = !figure; });
  };
  bar.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-format]");
    const figure = current();
    if (!button || !figure) return;
    const format = button.dataset.format;
    const name = fileName(figure.run, format);
    if (format === "svg") save(svgBlob(figure.svg()), name);
    if (format === "json") {
      save(new Blob([JSON.stringify(figure.data(), null, 2)], { type: "application/json" }), name);
    }
    if (format === "png") {
      try {
        save(await pngBlob(figure.svg()), name);
      } catch (error) {
        report(error.message);
      }
    }
  });
  update();
  return update;
}
