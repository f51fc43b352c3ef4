// What the SDK scripts share: named steps that stop the script at the first
// failure, and collecting a stream.

// step runs fn, printing "ok   NAME", or the failure and exits 1.
export const step = async (name, fn) => {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (err) {
    console.error(`FAIL ${name}: ${err.stack || err}`);
    process.exit(1);
  }
};

// collect reads a stream's chunks into an array.
export const collect = async (gen) => {
  const out = [];
  for await (const chunk of gen) out.push(chunk);
  return out;
};
