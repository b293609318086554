//! Opening the viewer's URL in the desktop's browser, when there is a desktop.

/// Opens `url` in the desktop's browser (`$BROWSER` when set, else xdg-open; the
/// browser is not waited for). When it cannot, returns the sentence to print instead.
pub fn open_in_browser(url: &str) -> Result<(), String> {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    if !has_display {
        return Err("no display found; open the URL above in a browser".to_owned());
    }
    opener::open_browser(url)
        .map_err(|e| format!("could not start a browser ({e}); open the URL above"))
}
