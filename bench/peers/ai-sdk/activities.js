// The peer's tool, the same work as the harness's get_current_time.
function currentTime(timezone) {
  return new Date().toLocaleString('en-US', { timeZone: timezone, hour12: false });
}

module.exports = { currentTime };
