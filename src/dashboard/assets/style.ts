/** The dashboard's whole stylesheet: inlined in each page (no extra request), light and phone-first. */
export const DASHBOARD_CSS = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f6f7f9}
a{color:#0a53be}
a:hover{color:#06357a}
:focus-visible{outline:3px solid #0a53be;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:2}
.skip:focus{left:.5rem}
header{background:#14213d;color:#fff}
header .bar{max-width:64rem;margin:0 auto;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center}
header .brand{color:#fff;font-weight:700;text-decoration:none;margin-right:auto}
header nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
header nav a{color:#fff;text-decoration:none;padding:.25rem 0;border-bottom:2px solid transparent}
header nav a[aria-current=page]{border-bottom-color:#ffd166}
header form{margin:0}
header .who{font-size:.875rem;color:#d8dee9;overflow-wrap:anywhere}
header button{background:transparent;color:#fff;border:1px solid #8fa3c7;padding:.25rem .75rem}
main{max-width:64rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:1.5rem 0 .75rem}
.card{background:#fff;border:1px solid #d5d9e0;border-radius:8px;padding:1rem;margin:0 0 1rem}
.card>h2:first-child,.card h3:first-child,.notice h2:first-child{margin-top:0}
.narrow{max-width:26rem;margin:2rem auto}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
.hint{display:block;font-weight:400;font-size:.875rem;color:#4a5260}
.upload-zone{border:2px dashed #6b7480;border-radius:8px;padding:.75rem;margin:.75rem 0;max-width:32rem}
.upload-zone.dragging{border-color:#0a53be;background:#eef4ff}
.upload-zone progress{width:100%}
.upload-zone[hidden],.upload-zone progress[hidden]{display:none}
input,select{font:inherit;width:100%;max-width:32rem;padding:.5rem;border:1px solid #6b7480;border-radius:6px;background:#fff;color:inherit}
button,.button{font:inherit;display:inline-block;padding:.5rem 1rem;border-radius:6px;border:1px solid #0a53be;background:#0a53be;color:#fff;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:#0a53be}
button.danger{background:#b3261e;border-color:#b3261e}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin-top:1rem}
.grid{display:grid;gap:0 1rem;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr))}
.error{color:#a1140b}
.alert p{margin:0}
.alert{border-left:4px solid #a1140b;background:#fdecea;padding:.75rem 1rem;margin:0 0 1rem}
.notice{border-left:4px solid #1e7b34;background:#e9f6ec;padding:.75rem 1rem;margin:0 0 1rem}
.flag{color:#a4161a}
.secret{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.secret code{font-size:.95rem;background:#f0f2f5;padding:.5rem;border-radius:4px;overflow-wrap:anywhere;flex:1 1 16rem}
table{width:100%;border-collapse:collapse;background:#fff}
th,td{text-align:left;padding:.5rem;border-bottom:1px solid #e1e4e8;vertical-align:top}
.table-wrap{overflow-x:auto;margin-bottom:1rem}
.status{display:inline-block;padding:0 .5rem;border-radius:999px;font-size:.875rem;font-weight:600;background:#e8eaee}
.status-completed{background:#dff3e4;color:#14532d}
.status-failed{background:#fde2e0;color:#8a1c12}
.status-processing,.status-queued{background:#e0ebff;color:#123f8c}
progress{width:100%;height:1rem}
ol.clips{list-style:none;padding:0}
.clips{display:grid;gap:1rem;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));margin-top:.75rem}
.clip video{width:100%;height:auto;max-height:24rem;background:#000;border-radius:6px}
.clip img{width:4.5rem;height:auto;border-radius:4px;float:right;margin-left:.5rem}
.meta{font-size:.875rem;color:#3d4550;margin:.25rem 0}
dl.figures{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dl.figures dt{font-weight:600}
dl.figures dd{margin:0}
fieldset{border:1px solid #d5d9e0;border-radius:6px;margin:1rem 0;padding:.5rem 1rem 1rem}
legend{font-weight:600;padding:0 .25rem}
input[type=color]{width:4rem;height:2.25rem;padding:.125rem}
.logo-preview{margin:0}
.logo-preview img{display:block;max-width:15rem;height:auto;background:repeating-conic-gradient(#e3e6eb 0 25%,#fff 0 50%) 0 0/16px 16px;border:1px solid #d5d9e0}
.big{font-size:2rem;font-weight:700}
@media (max-width:40rem){main{padding:.75rem}.card{padding:.75rem}h1{font-size:1.35rem}
table.stack thead{position:absolute;left:-9999px}
table.stack tr{display:block;border-bottom:1px solid #d5d9e0;padding:.25rem 0}
table.stack td{display:block;border:0;padding:.25rem .5rem}
table.stack td::before{content:attr(data-label);display:inline-block;min-width:7.5rem;font-weight:600}}
.clip-page video{width:100%;max-width:24rem;height:auto;max-height:32rem;background:#000;border-radius:6px;display:block}
.nudges{display:flex;flex-wrap:wrap;gap:.25rem;margin:.25rem 0 .75rem}
.nudges button{padding:.25rem .6rem}
.words{display:flex;flex-wrap:wrap;gap:.25rem;border:0;padding:0;margin:0 0 1rem}
.words input{width:auto;min-width:3rem;max-width:10rem}
`;
